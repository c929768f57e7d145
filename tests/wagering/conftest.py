"""Fixtures of the wagering tests: a game-server API client, EUR."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tables.models import Studio, default_studio
from tables.studios import create_service_key
from tests.factories import CurrencyFactory


@pytest.fixture
def eur(db):
    return CurrencyFactory(code="EUR")


def client_for(user):
    """An ``APIClient`` authenticated with ``user``'s DRF token."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def studio_client(studio, name="game-server"):
    """An ``APIClient`` of a new game-server service account (``StudioAPIKey``) of ``studio`` (a
    ``Studio`` or its code); ``client.key`` is its ``StudioAPIKey``."""
    key, raw, _ = create_service_key(studio=studio, name=name)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    client.key = key
    return client


@pytest.fixture
def game_client(db):
    """An API client of a game-server service account of the default studio (every factory table's)."""
    return studio_client(Studio.objects.get(pk=default_studio()))
