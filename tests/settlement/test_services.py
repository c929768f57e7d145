"""Service-level tests of settlement (RULES 5, 8, 10; docs/round-record.md "Result") on PostgreSQL."""

import copy
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone

from accounts.models import Account
from accounts.services import withdraw
from settlement.exceptions import AlreadyResettled, ReasonRequired, RecordUnchanged
from settlement.jobs import alert_stuck_rounds, reconcile_ledger, unsettled_round_ids
from settlement.models import Alert, OperatorAction, PendingSettlement, RoundCorrection, SettlementDetail
from settlement.results import record_result
from settlement.services import resettle_round, settle_round
from settlement.voids import cancel, void_overdue_rounds, void_round
from tables.exceptions import IllegalTransition, InvalidRecord
from tables.models import Round
from tables.services import suspend
from tests.factories import BoundlessTableFactory, UserFactory, scan
from wagering.models import Bet
from wagering.records import check_record

from .helpers import BETS, FUNDS, STAKED, balance, keys, played_round, record_for

pytestmark = pytest.mark.django_db


def returns_of(round_):
    return dict(Bet.objects.filter(round=round_).values_list("record_id", "returned"))


def test_settle_pays_each_return_once_and_keeps_the_engine_detail():
    round_, players = played_round()
    settle_round(round_id=round_.pk)
    round_.refresh_from_db()
    assert round_.state == Round.State.SETTLED and round_.settled_at
    for rid, (_, _, _, expected) in BETS.items():
        bet = Bet.objects.get(round=round_, record_id=rid)
        assert (bet.state, bet.returned) == (Bet.State.SETTLED, expected)
        assert balance(players[rid]) == FUNDS - STAKED[rid] + expected
        detail = bet.settlement.detail
        assert detail["returned"] == str(expected) and detail["explanation"]
    # zero returns are not posted
    assert keys("payout:") == {f"payout:{b.pk}" for b in Bet.objects.filter(round=round_, returned__gt=0)}
    double = Bet.objects.get(round=round_, record_id="double").settlement.detail
    assert double["hands"][0]["odds"] == "1" and double["hands"][0]["stake"] == "20.00"  # stake x odds shown
    assert round_.events.filter(kind="settled").count() == 1


def test_a_round_is_priced_with_the_pay_tables_it_opened_with():
    """RULES 8: the table's odds changed after the round opened apply to later rounds only."""
    bets = {"bust": ("bust_bonus", "1.00", None, None)}
    table = BoundlessTableFactory()
    round_, players = played_round(table, bets, result=False)
    table.pay_tables = {"bust_bonus": {"bust_3_cards": "25"}}
    table.save()
    dealer = ["6D", "TC", "9S"]  # 16, draws a 9: the dealer busts with 3 cards (default odds 1:1)
    record = record_for(round_, bets, dealer=dealer, player_cards=["TH", "6C"])
    scan(round_.pk, record)
    record_result(round_id=round_.pk, record=record)
    settle_round(round_id=round_.pk)
    assert returns_of(round_) == {"bust": Decimal("2.00")} and balance(players["bust"]) == FUNDS + 1
    with pytest.raises(RecordUnchanged):
        resettle_round(round_id=round_.pk, corrected_record=record, reason="same record", actor="test")
    misread_suit = record_for(round_, bets, dealer=dealer, player_cards=["TS", "6C"])
    resettle_round(round_id=round_.pk, corrected_record=misread_suit, reason="a suit misread", actor="test")
    assert returns_of(round_) == {"bust": Decimal("2.00")} and not keys("resettle:")
    later, later_players = played_round(table, bets, result=False)
    assert later.pay_tables == table.pay_tables
    record = record_for(later, bets, dealer=dealer, player_cards=["TH", "6C"])
    scan(later.pk, record)
    record_result(round_id=later.pk, record=record)
    settle_round(round_id=later.pk)
    assert returns_of(later) == {"bust": Decimal("26.00")}


def test_settle_twice_changes_nothing_the_second_time():
    round_, players = played_round()
    settle_round(round_id=round_.pk)
    before = {rid: balance(p) for rid, p in players.items()}
    settle_round(round_id=round_.pk)
    assert {rid: balance(p) for rid, p in players.items()} == before
    assert round_.events.filter(kind="settled").count() == 1


def test_settle_ignores_rounds_not_resulted():
    round_, _ = played_round(result=False)
    settle_round(round_id=round_.pk)
    assert Round.objects.get(pk=round_.pk).state == Round.State.CLOSED and not keys("payout:")


def test_poison_record_goes_to_settlement_failed_with_an_alert_and_is_not_redriven():
    """A round without the settlement its record's check computed (resulted before there were
    any) is settled from its record: one the engine refuses fails the round."""
    round_, _ = played_round()
    Round.objects.filter(pk=round_.pk).update(record={**round_.record, "dealer": ["7D", "TC", "5S"]},
                                              resulted_at=timezone.now() - timezone.timedelta(hours=1))
    PendingSettlement.objects.filter(round=round_).delete()
    settle_round(round_id=round_.pk)
    round_.refresh_from_db()
    assert round_.state == Round.State.SETTLEMENT_FAILED and "dealer" in round_.failure_reason
    assert Alert.objects.filter(kind="settlement_failed", round=round_).count() == 1
    assert not keys("payout:") and round_.pk not in unsettled_round_ids(older_than=0)
    assert set(Bet.objects.filter(round=round_).values_list("state", flat=True)) == {Bet.State.ACCEPTED}


@pytest.mark.parametrize("state", ["open", "closed", "suspended", "resulted", "settlement_failed"])
def test_void_refunds_every_stake_and_extra_from_each_state(state):
    round_, players = played_round(result=state in ("resulted", "settlement_failed"))
    if state == "open":
        Round.objects.filter(pk=round_.pk).update(state="open")
    if state == "suspended":
        suspend(round_id=round_.pk, reason="scanner")
    if state == "settlement_failed":
        Round.objects.filter(pk=round_.pk).update(state="settlement_failed", failure_reason="test")
    operator = UserFactory()
    assert void_round(round_id=round_.pk, reason="misdeal", actor=operator)[1] is True
    round_.refresh_from_db()
    assert round_.state == Round.State.VOIDED
    assert {rid: balance(p) for rid, p in players.items()} == {rid: FUNDS for rid in players}
    double = Bet.objects.get(round=round_, record_id="double")
    assert {f"refund:{double.pk}", f"refund:double:{double.pk}"} <= keys("refund:")
    assert set(Bet.objects.filter(round=round_).values_list("state", flat=True)) == {Bet.State.REFUNDED}
    action = OperatorAction.objects.get(target_model="tables.round", target_pk=str(round_.pk))
    assert (action.actor, action.action, action.reason) == (operator, "void_round", "misdeal")
    assert void_round(round_id=round_.pk, reason="again", actor=operator)[1] is False  # idempotent: nothing changed
    assert OperatorAction.objects.count() == 1 and balance(players["hit"]) == FUNDS


def test_void_needs_a_reason():
    round_, _ = played_round()
    with pytest.raises(ReasonRequired):
        void_round(round_id=round_.pk, reason="  ", actor="system")


def test_void_of_a_settled_round_reverses_returns_and_flags_a_wallet_that_cannot_cover_it():
    round_, players = played_round()
    settle_round(round_id=round_.pk)
    paid = set(Bet.objects.filter(round=round_, returned__gt=0).values_list("pk", flat=True))
    winner = players["double"]  # 100 - 20 + 40 = 120; takes out 110, keeps 10
    withdraw(wallet=Account.objects.get(kind="wallet", player=winner), amount="110.00", key="w:1")
    void_round(round_id=round_.pk, reason="card misread, cannot be proven", actor=UserFactory())
    round_.refresh_from_db()
    assert round_.state == Round.State.VOIDED
    # stake 20 refunded, return 40 taken back: 10 + 20 - 40 = -10, flagged
    wallet = Account.objects.get(kind="wallet", player=winner)
    assert wallet.balance == Decimal("-10.00") and wallet.negative_flagged
    assert Alert.objects.filter(kind="negative_wallet", round=round_).count() == 1
    for rid, p in players.items():
        if rid != "double":
            assert balance(p) == FUNDS and not Account.objects.get(kind="wallet", player=p).negative_flagged
    assert keys("reverse:") == {f"reverse:{pk}" for pk in paid}
    # RULES 10: the Bet Record shows a void, everything staked came back (the payout was taken back)
    for bet in Bet.objects.filter(round=round_).prefetch_related("extras"):
        assert (bet.state, bet.outcome) == (Bet.State.REFUNDED, "void")
        assert bet.returned == bet.stake + sum(x.amount for x in bet.extras.all())
    assert OperatorAction.objects.get().action == "reverse_round"
    assert round_.events.filter(kind="reversed").count() == 3


def corrected(round_, dealer):
    return record_for(round_, dealer=dealer)


def test_resettle_posts_only_the_differences_and_keeps_the_original_record():
    round_, players = played_round()
    original = round_.record
    settle_round(round_id=round_.pk)
    operator = UserFactory()
    # the dealer's second card was a 9, not a ten: 16, draws 5 -> 21
    correction = resettle_round(round_id=round_.pk, corrected_record=corrected(round_, ["7D", "9C", "5H"]),
                                         reason="misread 9C as TC", actor=operator)
    assert correction.sequence == 1
    round_.refresh_from_db()
    assert round_.record == original and round_.state == Round.State.SETTLED
    # hit 21 vs 21 pushes (20 -> 10), double pushes (40 -> 20), surrender unchanged, losers unchanged
    assert returns_of(round_)["hit"] == Decimal("10.00") and returns_of(round_)["double"] == Decimal("20.00")
    assert balance(players["hit"]) == FUNDS and balance(players["double"]) == FUNDS
    assert balance(players["surrender"]) == FUNDS - 5
    hit, double = (Bet.objects.get(round=round_, record_id=r) for r in ("hit", "double"))
    assert keys("resettle:") == {f"resettle:{hit.pk}:1", f"resettle:{double.pk}:1"}
    assert hit.settlement.correction == 1 and hit.settlement.detail["outcome"] == "push"
    # the first settlement's details stay as evidence beside the correction's
    first = SettlementDetail.objects.filter(round=round_, correction=0)
    assert first.filter(detail__outcome="win", detail__stake="10.00", detail__type="main").exists()
    # a second correction: the dealer busts with TH -> stand and auto win, bust bonus pays 1:1
    resettle_round(round_id=round_.pk, corrected_record=corrected(round_, ["7D", "9C", "TH"]),
                            reason="misread again", actor=operator)
    assert returns_of(round_) == {"hit": Decimal("20.00"), "stand": Decimal("20.00"), "auto": Decimal("20.00"),
                                  "surrender": Decimal("5.00"), "double": Decimal("40.00"), "bust": Decimal("2.00")}
    for rid, p in players.items():
        assert balance(p) == FUNDS - STAKED[rid] + returns_of(round_)[rid]
    assert list(RoundCorrection.objects.filter(round=round_).values_list("sequence", flat=True)) == [1, 2]
    from settlement.selectors import effective_record
    assert effective_record(round_)["dealer"] == ["7D", "9C", "TH"]
    assert OperatorAction.objects.filter(action="resettle_round").count() == 2


def test_a_resettle_confirmed_after_another_correction_changes_nothing():
    """The operator saw the round without corrections; another resettle came first (a double submit,
    two operators): the service refuses under the round lock, nothing is written."""
    round_, players = played_round()
    settle_round(round_id=round_.pk)
    resettle_round(round_id=round_.pk, corrected_record=corrected(round_, ["7D", "9C", "5H"]), reason="misread",
                   actor="operator:a", after_correction=0)
    with pytest.raises(AlreadyResettled):
        resettle_round(round_id=round_.pk, corrected_record=corrected(round_, ["7D", "9C", "TH"]), reason="misread",
                       actor="operator:b", after_correction=0)
    assert list(RoundCorrection.objects.filter(round=round_).values_list("sequence", flat=True)) == [1]
    assert OperatorAction.objects.filter(action="resettle_round").count() == 1


def test_outer_services_refuse_to_run_inside_a_callers_transaction():
    """Settling commits on its own (its task is retried on its own): a caller may not wrap it."""
    round_, _ = played_round()
    with pytest.raises(RuntimeError, match="durable"), transaction.atomic():
        settle_round(round_id=round_.pk)


def test_resettle_debit_may_take_a_wallet_negative_flagged():
    round_, players = played_round()
    settle_round(round_id=round_.pk)
    withdraw(wallet=Account.objects.get(kind="wallet", player=players["double"]), amount="120.00", key="w:2")
    resettle_round(round_id=round_.pk, corrected_record=corrected(round_, ["7D", "9C", "5H"]),
                            reason="misread", actor="operator:x")
    wallet = Account.objects.get(kind="wallet", player=players["double"])
    assert wallet.balance == Decimal("-20.00") and wallet.negative_flagged
    assert Alert.objects.filter(kind="negative_wallet").count() == 1


def test_resettle_of_a_failed_round_settles_it():
    round_, players = played_round()
    Round.objects.filter(pk=round_.pk).update(state="settlement_failed", failure_reason="x")
    resettle_round(round_id=round_.pk, corrected_record=round_.record, reason="engine fixed",
                            actor="operator:x")
    round_.refresh_from_db()
    assert round_.state == Round.State.SETTLED and not round_.failure_reason
    assert balance(players["hit"]) == FUNDS + 10 and keys("resettle:") == set()


def test_resettle_rejects_an_invalid_record_and_other_states():
    round_, _ = played_round()
    with pytest.raises(IllegalTransition):
        resettle_round(round_id=round_.pk, corrected_record=round_.record, reason="r", actor="x")
    settle_round(round_id=round_.pk)
    with pytest.raises(InvalidRecord):
        resettle_round(round_id=round_.pk, corrected_record=corrected(round_, ["7D", "9C"]),
                                reason="r", actor="x")
    assert not RoundCorrection.objects.exists()


def test_cancel_voids_through_settlement_in_the_same_transaction():
    round_, players = played_round(result=False)
    cancel(round_id=round_.pk, reason="host disconnected", actor="game-server:gs")
    round_.refresh_from_db()
    assert round_.state == Round.State.VOIDED and round_.cancelled_at
    assert all(balance(p) == FUNDS for p in players.values())
    assert OperatorAction.objects.get().actor_label == "game-server:gs"


def test_void_overdue_voids_only_rounds_suspended_past_their_table_limit():
    slow = BoundlessTableFactory(suspend_limit_seconds=60)
    quick = BoundlessTableFactory(suspend_limit_seconds=0)
    kept, _ = played_round(slow, result=False)
    overdue, players = played_round(quick, result=False)
    for r in (kept, overdue):
        suspend(round_id=r.pk, reason="shuffler jam")
    assert void_overdue_rounds() == [overdue.pk]
    assert Round.objects.get(pk=overdue.pk).state == Round.State.VOIDED
    assert Round.objects.get(pk=kept.pk).state == Round.State.SUSPENDED
    assert all(balance(p) == FUNDS for p in players.values())
    assert OperatorAction.objects.get().actor_label == "system"


def test_unsettled_round_ids_waits_the_redrive_delay():
    round_, _ = played_round()
    assert unsettled_round_ids(older_than=3600) == []
    assert unsettled_round_ids(older_than=0) == [round_.pk]


def test_a_round_resulted_long_ago_and_still_unsettled_raises_one_alert(settings):
    round_, _ = played_round()
    assert alert_stuck_rounds() == []  # just resulted: the re-drive has time
    later = round_.resulted_at + timedelta(seconds=settings.SETTLEMENT_STUCK_AFTER_SECONDS + 1)
    assert alert_stuck_rounds(now=later) == [round_.pk]
    assert alert_stuck_rounds(now=later + timedelta(hours=1)) == []  # once per round
    alert = Alert.objects.get(kind=Alert.Kind.SETTLEMENT_STUCK)
    assert alert.round_id == round_.pk and alert.severity == Alert.Severity.CRITICAL
    assert alert.message.startswith(f"round {round_.table.code}/{round_.external_id} resulted at")
    other, _ = played_round()
    assert alert_stuck_rounds(now=other.resulted_at + timedelta(hours=1)) == [other.pk]


def test_reconcile_ledger_records_a_breach_as_an_alert():
    assert reconcile_ledger().ok and not Alert.objects.exists()
    round_, players = played_round()
    Account.objects.filter(kind="wallet", player=players["hit"]).update(balance=Decimal("1.00"))
    assert not reconcile_ledger().ok
    alert = Alert.objects.get(kind="reconcile_breach")
    assert alert.severity == "critical" and alert.payload["breaches"]
    Account.objects.filter(kind="wallet", player=players["hit"]).update(balance=FUNDS - 10)  # for the teardown check


def test_beat_schedule_rows_exist():
    from django_celery_beat.models import PeriodicTask
    tasks = set(PeriodicTask.objects.filter(enabled=True).values_list("task", flat=True))
    assert {"settlement.redrive_unsettled", "settlement.void_overdue", "settlement.reconcile_ledger"} <= tasks


def test_a_record_disagreeing_on_a_stake_names_both_in_minor_units():
    """The third fresh attack: ``bets[0].stake: the platform holds "10.0000"``."""
    round_, _ = played_round()
    record = copy.deepcopy(round_.record)
    record["bets"][0]["stake"] = "20.00"
    with pytest.raises(InvalidRecord) as refused:
        check_record(round_, record)
    assert str(refused.value).endswith('the record says "20.00"') and '.0000"' not in str(refused.value)
