"""Replays and new money through the game-server API: a bet or extra stake sent again answers what
was taken, whether or not its player could stake now, and only a request that matches it in full
(player, type, seat, stake, record id); anything NEW, an extra stake included, needs what a new bet
needs (a live session, an agreement of the player's operator with the studio)."""

from decimal import Decimal

import pytest
from django.utils import timezone

from accounts.models import PlayerSession
from tables.models import StudioAgreement
from tests.factories import BoundlessTableFactory, PlayerFactory, PremiumTableFactory
from wagering.models import Bet, BetExtra

from .helpers import balance, sit
from .test_api import open_round
from .test_hardening import json_error

pytestmark = pytest.mark.django_db
D = Decimal


def _end_session(player):
    PlayerSession.objects.filter(player=player).update(revoked_at=timezone.now())


def _drop_agreement(player):
    StudioAgreement.objects.filter(operator=player.operator).delete()


def _bet(client, round_id, body):
    return client.post(f"/api/game/v1/rounds/{round_id}/bets/", body, format="json")


@pytest.mark.parametrize("gone", [_end_session, _drop_agreement])
@pytest.mark.parametrize("batch", [False, True])
def test_a_bet_sent_again_answers_its_replay_once_its_player_may_no_longer_stake(eur, game_client, gone, batch):
    """The bet exists and its money moved: the same request again answers it (200, created
    false), with no second debit, after the player's session ended or their operator's agreement
    was deleted; a NEW bet of that player is 404 ``not_found``, and a replay that differs from the
    bet is 409 ``idempotency_conflict``."""
    player, other = PlayerFactory(funded="100.00"), PlayerFactory(funded="100.00")
    round_id = open_round(game_client, BoundlessTableFactory())
    request = {"key": "k", "player": player.code, "type": "main", "stake": "10.00"}
    first = _bet(game_client, round_id, request)
    assert first.status_code == 201
    gone(player)

    def send(body):
        answer = _bet(game_client, round_id, {"bets": [body]} if batch else body)
        if batch and answer.status_code == 422:
            return answer.status_code, answer.data["results"][0]["error"]["code"]
        return answer.status_code, answer.data["results"][0] if batch else answer.data

    status, replay = send(request)
    assert status == 200 and replay["created"] is False and replay["bets"] == first.data["bets"]
    for changed, refusal in [({"key": "new"}, (404, "not_found")), ({"stake": "20.00"}, (409, "idempotency_conflict")),
                             ({"type": "pairs"}, (409, "idempotency_conflict")),
                             ({"player": other.code}, (409, "idempotency_conflict")),
                             ({"record_id": "other"}, (409, "idempotency_conflict"))]:
        if batch:
            assert send({**request, **changed}) == (422, refusal[1]), changed
        else:
            json_error(_bet(game_client, round_id, {**request, **changed}), *refusal)
    assert Bet.objects.count() == 1 and balance(player) == D("90.00") and balance(other) == D("100.00")


def test_a_bet_sent_again_with_another_record_id_is_a_conflict(eur, game_client):
    """The record id is part of the bet (the round record names it): the same key with another
    ``record_id`` is 409 ``idempotency_conflict``, as is leaving out one given the first time (the
    default is the key); the same one again is the replay."""
    player = PlayerFactory(funded="100.00")
    round_id = open_round(game_client, BoundlessTableFactory())
    request = {"key": "k", "player": player.code, "type": "main", "stake": "10.00", "record_id": "r-1"}
    assert _bet(game_client, round_id, request).status_code == 201
    assert _bet(game_client, round_id, request).status_code == 200
    json_error(_bet(game_client, round_id, {**request, "record_id": "r-2"}), 409, "idempotency_conflict")
    json_error(_bet(game_client, round_id, {k: v for k, v in request.items() if k != "record_id"}), 409,
               "idempotency_conflict")
    bare = {"key": "b", "player": player.code, "type": "pairs", "stake": "1.00"}
    assert _bet(game_client, round_id, bare).status_code == 201
    assert _bet(game_client, round_id, {**bare, "record_id": "b"}).status_code == 200  # the default: the key
    json_error(_bet(game_client, round_id, {**bare, "record_id": "b2"}), 409, "idempotency_conflict")
    assert Bet.objects.count() == 2 and balance(player) == D("89.00")


def test_a_mirrored_premium_bet_sent_again_is_compared_by_its_record_id(eur, game_client):
    """A premium seat bet mirrored on the player's second seat: the same request again answers
    both bets; with another record id it is 409 ``idempotency_conflict``."""
    player = PlayerFactory(funded="100.00")
    table = PremiumTableFactory()
    sit(table, 4, player)
    round_id = open_round(game_client, table)
    request = {"key": "p", "player": player.code, "type": "main", "seat": 3, "stake": "10.00", "record_id": "p-1"}
    placed = _bet(game_client, round_id, request)
    assert placed.status_code == 201 and [b["record_id"] for b in placed.data["bets"]] == ["p-1", "p-1#mirror"]
    assert _bet(game_client, round_id, request).data["bets"] == placed.data["bets"]
    json_error(_bet(game_client, round_id, {**request, "record_id": "p-2"}), 409, "idempotency_conflict")
    assert Bet.objects.count() == 2 and balance(player) == D("80.00")


@pytest.mark.parametrize("gone", [_end_session, _drop_agreement])
def test_a_new_extra_stake_needs_what_a_new_bet_needs(eur, game_client, gone):
    """A double is new money: once the player's session ended or their operator's agreement with
    the studio was deleted it is refused like a new bet (404 ``not_found``), nothing taken; an
    extra stake taken before that answers its replay. (Premium: the player's seat bet ``p`` on
    seat 3 is mirrored on their seat 4, ``p#mirror``.)"""
    player = PlayerFactory(funded="100.00")
    table = PremiumTableFactory()
    sit(table, 4, player)
    round_id = open_round(game_client, table)
    assert _bet(game_client, round_id, {"key": "p", "player": player.code, "type": "main", "seat": 3,
                                        "stake": "10.00"}).status_code == 201
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/close/").status_code == 200
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/events/", {"events": [
        {"kind": "card_scanned", "card": c, "to": t} for c, t in (
            ("5C", "seat:3"), ("5D", "seat:4"), ("9S", "dealer"), ("6H", "seat:3"), ("6S", "seat:4"),
            ("7D", "dealer"))]}, format="json").status_code == 201
    url = f"/api/game/v1/rounds/{round_id}/extras/"
    double = {"bet": "p", "kind": "double", "cards": ["5C", "6H"]}
    mirror = {"bet": "p#mirror", "kind": "double", "cards": ["5D", "6S"]}
    taken = game_client.post(url, double, format="json")
    assert taken.data["applied"] is True and balance(player) == D("70.00")
    gone(player)
    assert game_client.post(url, double, format="json").data == taken.data
    json_error(game_client.post(url, mirror, format="json"), 404, "not_found")
    batch = game_client.post(url, {"extras": [double, mirror]}, format="json")
    assert batch.status_code == 207 and batch.data["results"][1]["error"]["code"] == "not_found"
    assert BetExtra.objects.count() == 1 and balance(player) == D("70.00")
