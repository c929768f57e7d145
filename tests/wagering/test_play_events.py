"""The game server reports scans, rescans, decisions and auto-play to the round's timeline
(RoundEvent kinds; RULES 10: a card is scanned again until it is read)."""

import pytest

from tables.exceptions import IllegalTransition, InvalidInput
from tables.models import RoundEvent
from tables.services import report_play
from tests.factories import RoundFactory
from wagering.closing import close_betting

pytestmark = pytest.mark.django_db


def test_rules_10_scans_rescans_and_decisions_are_appended_in_order():
    round_ = RoundFactory()
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
