"""Who gets in: the token lookup, remembered for a few seconds, still refuses what it must."""

import pytest
from django.core.cache import cache, caches
from rest_framework.authtoken.models import Token

from delivery.api.player.authentication import CACHE
from tests.factories import UserFactory
from tests.wagering.conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_caches():
    caches[CACHE].clear()
    cache.clear()
    yield
    cache.clear()


def test_a_token_is_looked_up_once(api, django_assert_num_queries):
    with django_assert_num_queries(2):  # token + user + player in one query, then the page
        assert api.get("/api/v1/bets/").status_code == 200
    with django_assert_num_queries(1):
        assert api.get("/api/v1/bets/").status_code == 200


def test_a_deleted_token_is_refused_at_once(api, alice):
    assert api.get("/api/v1/me").status_code == 200
    Token.objects.filter(user=alice.user).get().delete()
    response = api.get("/api/v1/me")
    assert response.status_code == 401 and response.json()["code"] == "authentication_failed"


def test_a_deactivated_user_is_refused_at_once(api, alice):
    assert api.get("/api/v1/me").status_code == 200
    alice.user.is_active = False
    alice.user.save()
    assert api.get("/api/v1/me").status_code == 401


def test_a_user_without_a_player_stays_out_when_remembered(eur, django_assert_num_queries):
    operator = client_for(UserFactory(is_staff=True))
    assert operator.get("/api/v1/me").status_code == 403
    with django_assert_num_queries(0):
        assert operator.get("/api/v1/me").status_code == 403


def test_an_unknown_token_is_refused(eur):
    client = client_for(UserFactory())
    client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    assert client.get("/api/v1/me").status_code == 401


def test_a_token_expires_as_a_session_would(api, alice, settings):
    """Issue 20, F8: a player's DRF token lets them in for ``PLAYER_SESSION_LIFETIME_SECONDS``
    after it was made, remembered or not; then 401 (it never expired)."""
    from datetime import timedelta

    from django.utils import timezone

    settings.PLAYER_SESSION_LIFETIME_SECONDS = 3600
    token = Token.objects.get(user=alice.user)
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - timedelta(seconds=3500))
    assert api.get("/api/v1/me").status_code == 200  # remembered from here on
    settings.PLAYER_SESSION_LIFETIME_SECONDS = 3500  # its end has come: the remembered copy too
    remembered = api.get("/api/v1/me")
    assert remembered.status_code == 401 and remembered.json()["code"] == "authentication_failed"
    caches[CACHE].clear()
    assert api.get("/api/v1/me").status_code == 401
    settings.PLAYER_SESSION_LIFETIME_SECONDS = 3600
    assert api.get("/api/v1/me").status_code == 200
