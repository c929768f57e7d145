"""The settlement a record's check computes, kept until its round is settled (``settlement.plans``):
the engine runs once per record, the plan is written exactly once, a crash leaves it for the next
try, a void drops it, and a round without one settles from its record as before."""

from unittest import mock

import pytest
from django.db import OperationalError

import tables.engine
from settlement.models import Alert, PendingSettlement, SettlementDetail
from settlement.results import record_result
from settlement.services import settle_round
from settlement.voids import void_round
from tables.models import Round
from tests.factories import BoundlessTableFactory, scan
from wagering.models import Bet, DailyRollup

from .helpers import BETS, FUNDS, STAKED, balance, keys, played_round, record_for

pytestmark = pytest.mark.django_db


def settled_bets(round_):
    """``{record_id: (state, outcome, returned, detail)}`` of ``round_``'s bets."""
    return {b.record_id: (b.state, b.outcome, b.returned, b.settlement.detail if b.settlement else None)
            for b in Bet.objects.filter(round=round_).select_related("settlement")}


def test_the_engine_settles_a_record_once_when_it_is_taken_and_the_worker_writes_that():
    round_, players = played_round(result=False)
    record = record_for(round_)
    scan(round_.pk, record)  # the game server's scans, which the record must match
    with mock.patch.object(tables.engine, "settle", wraps=tables.engine.settle) as engine:
        record_result(round_id=round_.pk, record=record)
        assert engine.call_count == 1 and PendingSettlement.objects.filter(round=round_).exists()
        settle_round(round_id=round_.pk)
        assert engine.call_count == 1
    round_.refresh_from_db()
    assert round_.state == Round.State.SETTLED and not PendingSettlement.objects.filter(round=round_).exists()
    for rid, (_, _, _, expected) in BETS.items():
        assert balance(players[rid]) == FUNDS - STAKED[rid] + expected
    assert keys("payout:") == {f"payout:{b.pk}" for b in Bet.objects.filter(round=round_, returned__gt=0)}


def test_a_round_without_a_plan_is_settled_from_its_record_alike():
    """A round whose record was taken before plans were kept: checked and computed at settlement."""
    table = BoundlessTableFactory()
    kept, _ = played_round(table)
    legacy, players = played_round(table)
    PendingSettlement.objects.filter(round=legacy).delete()
    settle_round(round_id=kept.pk)
    settle_round(round_id=legacy.pk)
    assert Round.objects.get(pk=legacy.pk).state == Round.State.SETTLED
    assert settled_bets(legacy) == settled_bets(kept)
    for rid, (_, _, _, expected) in BETS.items():
        assert balance(players[rid]) == FUNDS - STAKED[rid] + expected


def test_a_settlement_broken_off_leaves_its_plan_and_the_next_try_pays_once():
    round_, players = played_round()
    with mock.patch("settlement.services.move", side_effect=OperationalError("connection lost")), \
            pytest.raises(OperationalError):
        settle_round(round_id=round_.pk)
    round_.refresh_from_db()
    assert round_.state == Round.State.RESULTED and PendingSettlement.objects.filter(round=round_).exists()
    assert not keys("payout:") and not Bet.objects.filter(round=round_, state=Bet.State.SETTLED).exists()
    settle_round(round_id=round_.pk)
    settle_round(round_id=round_.pk)
    round_.refresh_from_db()
    assert round_.state == Round.State.SETTLED and round_.events.filter(kind="settled").count() == 1
    for rid, (_, _, _, expected) in BETS.items():
        assert balance(players[rid]) == FUNDS - STAKED[rid] + expected


def test_a_resulted_round_voided_drops_its_plan_and_is_never_settled():
    round_, players = played_round()
    void_round(round_id=round_.pk, reason="studio fault", actor="test")
    assert not PendingSettlement.objects.filter(round=round_).exists()
    settle_round(round_id=round_.pk)  # a late delivery
    round_.refresh_from_db()
    assert round_.state == Round.State.VOIDED and not keys("payout:")
    assert all(balance(p) == FUNDS for p in players.values())


def test_a_plan_that_no_longer_matches_the_open_bets_fails_the_round():
    round_, _ = played_round()
    Bet.objects.filter(round=round_, record_id="bust").update(state=Bet.State.REFUNDED)  # behind the services
    settle_round(round_id=round_.pk)
    round_.refresh_from_db()
    assert round_.state == Round.State.SETTLEMENT_FAILED
    assert round_.failure_reason == "bets: 1 of the 6 bets the record settles are no longer open"
    assert not PendingSettlement.objects.filter(round=round_).exists() and not keys("payout:")
    assert not Bet.objects.filter(round=round_, state=Bet.State.SETTLED).exists()  # the bets written, undone
    assert not SettlementDetail.objects.filter(round=round_).exists() and not DailyRollup.objects.exists()
    assert Alert.objects.filter(kind=Alert.Kind.SETTLEMENT_FAILED, round=round_).exists()
