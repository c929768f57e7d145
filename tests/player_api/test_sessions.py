"""Player sessions in the player API (``Authorization: Bearer <session token>``): minted by the
player's operator, refused once revoked, expired or idle, remembered by each process for at most
PLAYER_API_TOKEN_CACHE_SECONDS but checked against the clock on every request."""

import time
from datetime import timedelta

import pytest
from django.core.cache import caches
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import PlayerSession
from accounts.operators import open_session, revoke_session, token_hash
from delivery.api.player.authentication import CACHE
from tests.factories import BoundlessTableFactory, operator_with_players
from tests.player_api.conftest import play
from wagering.models import Bet

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_session_cache():
    caches[CACHE].clear()
    yield
    caches[CACHE].clear()


@pytest.fixture
def acme(db):
    """Operator ``acme`` with player ``p1`` holding 100.00 EUR."""
    return operator_with_players("acme", ["p1"], funded="100.00")


def session_client(operator, player="p1", currency="EUR"):
    """``(APIClient with a new session of operator's player, token)``."""
    _, token = open_session(operator=operator, player=player, currency=currency)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client, token


def session_of(token):
    return PlayerSession.objects.get(token_hash=token_hash(token))


def refused(response):
    return response.status_code == 401 and response.json()["code"] == "authentication_failed"


def test_a_session_signs_its_player_in(acme):
    operator, _, players = acme
    client, token = session_client(operator)
    response = client.get("/api/v1/me")
    assert response.status_code == 200, response.content
    assert response.json()["code"] == "p1" and response.json()["wallets"][0]["balance"] == "100.00"
    assert session_of(token).player == players["p1"]


def test_a_session_is_looked_up_once_and_touched_at_most_once_a_minute(acme, django_assert_num_queries):
    operator, _, _ = acme
    client, token = session_client(operator)
    with django_assert_num_queries(2):  # session + player + user in one query, then the page
        assert client.get("/api/v1/bets/").status_code == 200
    with django_assert_num_queries(1):  # remembered; used less than a minute ago: no write
        assert client.get("/api/v1/bets/").status_code == 200
    PlayerSession.objects.filter(token_hash=token_hash(token)).update(
        last_used_at=timezone.now() - timedelta(seconds=90))
    caches[CACHE].clear()
    before = timezone.now()
    with django_assert_num_queries(3):  # session, the touch (one UPDATE), the page
        assert client.get("/api/v1/bets/").status_code == 200
    assert session_of(token).last_used_at >= before


def test_a_revoked_session_is_refused_at_once_in_this_process(acme):
    operator, _, _ = acme
    client, token = session_client(operator)
    assert client.get("/api/v1/me").status_code == 200  # now remembered
    revoke_session(operator=operator, token=token)
    assert refused(client.get("/api/v1/me"))


def test_another_process_honours_a_revoke_within_the_cache_seconds(acme, monkeypatch):
    """A revoke saved elsewhere sends no signal here: the remembered session is honoured until its
    cache entry ends (PLAYER_API_TOKEN_CACHE_SECONDS, here 1 s), never longer."""
    monkeypatch.setattr(caches[CACHE], "default_timeout", 1)
    operator, _, _ = acme
    client, token = session_client(operator)
    assert client.get("/api/v1/me").status_code == 200
    PlayerSession.objects.filter(token_hash=token_hash(token)).update(revoked_at=timezone.now())  # no signal
    assert client.get("/api/v1/me").status_code == 200
    time.sleep(1.2)
    assert refused(client.get("/api/v1/me"))


def test_an_expired_session_is_refused(acme):
    operator, _, _ = acme
    client, token = session_client(operator)
    PlayerSession.objects.filter(token_hash=token_hash(token)).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert refused(client.get("/api/v1/me"))


def test_an_idle_session_is_refused(acme, settings):
    operator, _, _ = acme
    client, token = session_client(operator)
    PlayerSession.objects.filter(token_hash=token_hash(token)).update(
        last_used_at=timezone.now() - timedelta(seconds=settings.PLAYER_SESSION_IDLE_SECONDS + 1))
    assert refused(client.get("/api/v1/me"))
    assert session_of(token).revoked_at is None  # refused, not changed


def test_expiry_is_checked_against_the_clock_even_when_remembered(acme):
    operator, _, _ = acme
    client, token = session_client(operator)
    PlayerSession.objects.filter(token_hash=token_hash(token)).update(expires_at=timezone.now() + timedelta(seconds=1))
    assert client.get("/api/v1/me").status_code == 200  # remembered with that expiry
    time.sleep(1.2)
    assert refused(client.get("/api/v1/me"))


def test_idleness_is_checked_against_the_clock_even_when_remembered(acme, settings):
    operator, _, _ = acme
    client, _ = session_client(operator)
    settings.PLAYER_SESSION_IDLE_SECONDS = 1
    assert client.get("/api/v1/me").status_code == 200
    time.sleep(1.2)
    assert refused(client.get("/api/v1/me"))


def test_a_remembered_session_another_process_kept_alive_is_read_again_not_refused(acme, settings):
    operator, _, _ = acme
    client, token = session_client(operator)
    settings.PLAYER_SESSION_IDLE_SECONDS = 1
    assert client.get("/api/v1/me").status_code == 200
    time.sleep(1.2)
    PlayerSession.objects.filter(token_hash=token_hash(token)).update(last_used_at=timezone.now())  # used elsewhere
    assert client.get("/api/v1/me").status_code == 200


def test_an_inactive_user_is_refused(acme):
    operator, _, players = acme
    client, _ = session_client(operator)
    user = players["p1"].user
    user.is_active = False
    user.save()
    assert refused(client.get("/api/v1/me"))


@pytest.mark.parametrize("header", ["Bearer", "Bearer a b", "Bearer " + "x" * 201, "Bearer nope", "bearer \x01x"])
def test_malformed_or_unknown_bearer_credentials_are_refused(acme, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    assert refused(client.get("/api/v1/me"))


def test_a_session_of_another_operators_player_never_shows_this_operators_data(eur):
    """acme and bolt both have a player p1; bolt's p1 sees its own bets only."""
    acme, _, _ = operator_with_players("acme", ["p1"], funded="100.00")
    bolt, _, _ = operator_with_players("bolt", ["p1"], funded="100.00")
    round_ = play(BoundlessTableFactory(), {
        "dealer": ["7D", "TC"], "player_cards": ["TH", "6C"],
        "bets": [{"id": "a", "player": "acme:p1", "type": "main", "stake": "10.00", "actions": ["stand"]},
                 {"id": "b", "player": "bolt:p1", "type": "main", "stake": "5.00", "actions": ["stand"]}]})
    acme_bet = Bet.objects.get(round=round_, record_id="a")
    client, _ = session_client(bolt)
    bets = client.get("/api/v1/bets/").json()["results"]
    assert [b["stake"] for b in bets] == ["5.00"]
    assert client.get(f"/api/v1/bets/{acme_bet.pk}").status_code == 404
    assert client.get("/api/v1/me").json()["wallets"][0]["balance"] == "95.00"
    keys = {e["key"] for e in client.get("/api/v1/ledger/").json()["results"]}
    bolt_bet = Bet.objects.get(round=round_, record_id="b")
    assert {"transfer:bolt:fund-p1-EUR", f"stake:{bolt_bet.pk}"} <= keys
    assert not any(key.startswith("transfer:acme:") or key.endswith(f":{acme_bet.pk}") for key in keys)
