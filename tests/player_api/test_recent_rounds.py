"""``GET /api/v1/rounds/recent``: a player's last rounds, newest first, each with its result, the
player's bets and every step of the round (the player's own in full, the round's own without
totals); never another player's bets or steps; at most ``RECENT_ROUNDS``."""

import pytest

from delivery.api.player import views
from tables.models import RoundEvent
from tests.factories import BoundlessTableFactory

from .conftest import client_for, play

pytestmark = pytest.mark.django_db


def test_recent_rounds_recall_every_step_of_the_players_own(api, premium_round, boundless_round):
    data = api.get("/api/v1/rounds/recent").json()
    assert [r["id"] for r in data] == [boundless_round.pk, premium_round.pk]
    premium = data[1]
    assert premium["result"]["dealer"]["cards"] == ["9D", "8C"]
    assert [b["type"] for b in premium["bets"]] == ["pairs", "main"]
    kinds = [s["kind"] for s in premium["steps"]]
    assert kinds[0] == "opened" and kinds[-1] == "settled" and "resulted" in kinds
    placed = [s["detail"] for s in premium["steps"] if s["kind"] == "bet_placed"]
    assert sorted(d["record_id"] for d in placed) == ["a1", "a2"] and placed[0]["stake"]
    settled = next(s for s in premium["steps"] if s["kind"] == "settled")
    assert settled["detail"] == {}  # the whole round's totals are not one player's
    assert "carol" not in str(data) and "bob" not in str(data)


def test_recent_rounds_are_the_last_few(api, alice, monkeypatch):
    monkeypatch.setattr(views, "RECENT_ROUNDS", 2)
    table = BoundlessTableFactory()
    rounds = [play(table, {"dealer": ["7D", "TC"], "player_cards": ["TH", "6C"],
                           "bets": [{"id": "a", "player": "alice", "type": "main", "stake": "1.00",
                                     "actions": ["stand"]}]}) for _ in range(3)]
    data = api.get("/api/v1/rounds/recent").json()
    assert [r["id"] for r in data] == [rounds[2].pk, rounds[1].pk]


def test_another_player_recalls_only_their_own(bob, premium_round):
    data = client_for(bob.user).get("/api/v1/rounds/recent").json()
    assert [r["id"] for r in data] == [premium_round.pk]
    assert [b["type"] for b in data[0]["bets"]] == ["behind"]
    assert {s["detail"].get("record_id") for s in data[0]["steps"]} <= {"b1", None}


@pytest.mark.parametrize("record_id", [["a1"], {"id": "a1"}])
def test_an_event_with_a_record_id_that_is_no_string_names_no_bet(api, premium_round, record_id):
    """An event stored with a ``record_id`` that is no string (a list, an object) is no bet's: the
    player's recent rounds answer, that event's payload shown to nobody."""
    RoundEvent.objects.create(round=premium_round, kind=RoundEvent.Kind.DECISION,
                              payload={"record_id": record_id, "action": "hit"})
    response = api.get("/api/v1/rounds/recent")
    assert response.status_code == 200
    steps = response.json()[0]["steps"]
    assert "hit" not in [s["detail"].get("action") for s in steps if s["kind"] == "decision"]
    assert sorted(s["detail"]["record_id"] for s in steps if s["kind"] == "bet_placed") == ["a1", "a2"]
