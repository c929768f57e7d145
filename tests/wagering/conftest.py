"""Fixtures of the wagering tests: a game-server API client, EUR."""

import pytest
from django.contrib.auth.models import Group
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import CurrencyFactory, UserFactory


@pytest.fixture
def eur(db):
    return CurrencyFactory(code="EUR")


def client_for(user):
    """An ``APIClient`` authenticated with ``user``'s DRF token."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@pytest.fixture
def game_client(db):
    """An API client of a game-server service account (a user in the ``game_server`` group)."""
    user = UserFactory(username="game-server")
    user.groups.add(Group.objects.get_or_create(name="game_server")[0])
    return client_for(user)
