"""A suspended round (RULES 10) through the game-server API: it takes nothing until it is resumed,
and its resume answers the round as stored."""

import pytest

from tables.models import Round, RoundEvent
from tests.factories import BoundlessTableFactory, PlayerFactory

from .helpers import balance
from .test_api import open_round

pytestmark = pytest.mark.django_db


def _suspended(client, table, player):
    """A round of ``table`` with ``player``'s 10.00 bet ``m``, dealt (hand 5H 6D, dealer 9S and
    the hole card 7D) and then suspended; returns its id."""
    round_id = open_round(client, table)
    assert client.post(f"/api/game/v1/rounds/{round_id}/bets/", {"key": "m", "player": player.code, "type": "main",
                                                                 "stake": "10.00"}, format="json").status_code == 201
    assert client.post(f"/api/game/v1/rounds/{round_id}/close/").status_code == 200
    assert client.post(f"/api/game/v1/rounds/{round_id}/events/", {"events": [
        {"kind": "card_scanned", "card": c, "to": t}
        for c, t in (("5H", "player"), ("9S", "dealer"), ("6D", "player"), ("7D", "dealer"))]},
        format="json").status_code == 201
    assert client.post(f"/api/game/v1/rounds/{round_id}/suspend/", {"reason": "scanner fault"},
                       format="json").status_code == 200
    return round_id


def test_resume_answers_the_round_as_stored(eur, game_client):
    """Resuming brings the round back to CLOSED: the answer is the round the database holds (its
    betting closed when it closed, not when it resumed), as a fresh GET shows it."""
    round_id = _suspended(game_client, BoundlessTableFactory(), PlayerFactory(funded="100.00"))
    closed_at = Round.objects.get(pk=round_id).closed_at
    answer = game_client.post(f"/api/game/v1/rounds/{round_id}/resume/")
    assert answer.status_code == 200 and answer.data["state"] == "closed"
    fresh = game_client.get(f"/api/game/v1/rounds/{round_id}/").data
    assert dict(answer.data) == {k: fresh[k] for k in answer.data}
    assert Round.objects.get(pk=round_id).closed_at == closed_at


@pytest.mark.parametrize("item", [
    {"kind": "card_scanned", "card": "5S", "to": "player"},
    {"kind": "card_rescanned", "to": "player", "reason": "unreadable"},
    {"kind": "decision", "action": "hit"},
    {"kind": "auto_play", "action": "stand"},
])
def test_rules_10_a_suspended_round_takes_no_play_event_until_resumed(eur, game_client, item):
    """[decision] RULES 10 resumes a suspended round "where it stopped": while it is suspended no
    card comes out and nobody decides, so every play event is 409 ``illegal_transition`` and
    nothing is written; once resumed the same event is taken."""
    round_id = _suspended(game_client, BoundlessTableFactory(), PlayerFactory(funded="100.00"))
    before = RoundEvent.objects.filter(round_id=round_id).count()
    url = f"/api/game/v1/rounds/{round_id}/events/"
    refused = game_client.post(url, {"events": [item]}, format="json")
    assert (refused.status_code, refused.data["code"]) == (409, "illegal_transition") and refused.data["detail"]
    assert RoundEvent.objects.filter(round_id=round_id).count() == before
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/resume/").status_code == 200
    assert game_client.post(url, {"events": [item]}, format="json").status_code == 201


def test_rules_10_a_suspended_round_takes_no_extra_stake(eur, game_client):
    """Extra stakes are taken while the round is played: a suspended round's are 409
    ``illegal_transition``, no money moves; once resumed the double is taken."""
    player = PlayerFactory(funded="100.00")
    round_id = _suspended(game_client, BoundlessTableFactory(), player)
    url = f"/api/game/v1/rounds/{round_id}/extras/"
    double = {"bet": "m", "kind": "double", "cards": ["5H", "6D"]}
    refused = game_client.post(url, double, format="json")
    assert (refused.status_code, refused.data["code"]) == (409, "illegal_transition")
    assert balance(player) == 90
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/resume/").status_code == 200
    assert game_client.post(url, double, format="json").data["applied"] is True
    assert balance(player) == 80
