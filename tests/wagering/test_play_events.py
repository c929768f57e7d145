"""The game server reports scans, rescans, decisions and auto-play to the round's timeline
(RoundEvent kinds; RULES 10: a card is scanned again until it is read)."""

import pytest

from tables.exceptions import IllegalTransition, InvalidInput
from tables.models import RoundEvent
from tables.services import report_play
from tests.factories import BoundlessTableFactory, PlayerFactory, RoundFactory
from wagering.closing import close_betting
from wagering.placement import place_bet

from .helpers import sit
from .test_api import open_round

pytestmark = pytest.mark.django_db


def test_rules_10_scans_rescans_and_decisions_are_appended_in_order():
    round_ = RoundFactory()
    player = PlayerFactory(funded="100.00")
    sit(round_.table, 1, player)
    place_bet(round_id=round_.pk, key="s1", player=player.code, type="main", stake="10.00", seat=1)  # dealt to
    close_betting(round_id=round_.pk)
    report_play(round_id=round_.pk, actor="game-server:studio", events=[
        {"kind": "card_rescanned", "to": "seat:1", "reason": "unreadable"},
        {"kind": "card_scanned", "card": "AS", "to": "seat:1"},
        {"kind": "decision", "seat": 1, "hand": 1, "action": "stand"},
        {"kind": "auto_play", "seat": 2, "hand": 1, "action": "hit"},
    ])
    kinds = list(round_.events.filter(kind__in=["card_rescanned", "card_scanned", "decision", "auto_play"])
                 .order_by("id").values_list("kind", flat=True))
    assert kinds == ["card_rescanned", "card_scanned", "decision", "auto_play"]
    assert round_.events.get(kind="card_scanned").payload == {"card": "AS", "to": "seat:1"}


def test_play_events_need_a_round_being_dealt_and_known_kinds():
    round_ = RoundFactory()
    with pytest.raises(IllegalTransition):  # still betting: no cards yet
        report_play(round_id=round_.pk, events=[{"kind": "card_scanned", "card": "AS"}])
    close_betting(round_id=round_.pk)
    before = RoundEvent.objects.count()
    with pytest.raises(InvalidInput):  # all or nothing: the good first event is not kept
        report_play(round_id=round_.pk, events=[{"kind": "decision"}, {"kind": "settled"}])
    assert RoundEvent.objects.count() == before


@pytest.mark.parametrize("record_id", [["m"], {"id": "m"}, 7, None])
def test_an_event_naming_a_bet_names_it_by_its_record_id_a_string(eur, game_client, record_id):
    """A play event's ``record_id`` names a bet (the round record's id): any other JSON value is a
    400 ``invalid_input`` with a sentence, and none of the call's events is written."""
    round_id = open_round(game_client, BoundlessTableFactory())
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/close/").status_code == 200
    before = RoundEvent.objects.filter(round_id=round_id).count()
    for kind in ("decision", "auto_play", "card_rescanned"):
        response = game_client.post(f"/api/game/v1/rounds/{round_id}/events/", {"events": [
            {"kind": "decision", "record_id": "m", "action": "hit"},
            {"kind": kind, "record_id": record_id, "action": "stand", "to": "player"}]}, format="json")
        assert (response.status_code, response.data["code"]) == (400, "invalid_input"), response.data
        assert "record_id" in response.data["detail"]
    assert RoundEvent.objects.filter(round_id=round_id).count() == before
