"""Disputes, manual adjustments and their audit rows (settlement/disputes.py)."""

from decimal import Decimal

import pytest

from accounts.models import LedgerTransaction
from adminkit.roles import DISPUTE_OFFICER, SUPERVISOR
from settlement import disputes
from settlement.exceptions import AdjustmentLimitExceeded, AdjustmentNotAllowed, NoBets, NotOwnBets, ReasonRequired
from settlement.models import Dispute, OperatorAction
from tables.exceptions import IllegalTransition
from tests.factories import PlayerFactory, UserFactory, make_operator
from wagering.models import Bet

from .helpers import FUNDS, balance, played_round

pytestmark = pytest.mark.django_db


@pytest.fixture
def disputed():
    round_, players = played_round()
    player = players["stand"]
    return player, Bet.objects.get(round=round_, record_id="stand"), Bet.objects.get(round=round_, record_id="hit")


def test_a_player_disputes_only_their_own_bets(disputed):
    player, own, other = disputed
    with pytest.raises(NotOwnBets):
        disputes.open_dispute(player=player, bets=[own, other], reason="wrong card")
    with pytest.raises(NoBets):
        disputes.open_dispute(player=player, bets=[], reason="wrong card")
    with pytest.raises(ReasonRequired):
        disputes.open_dispute(player=player, bets=[own], reason="")
    dispute = disputes.open_dispute(player=player, bets=[own.pk], reason="the dealer had 16")
    assert (dispute.status, dispute.currency_id, list(dispute.bets.all())) == ("open", "EUR", [own])


@pytest.mark.parametrize("reason", ["a\x00b", "x" * 4001])
def test_a_reason_with_a_nul_or_over_4000_characters_is_refused(disputed, reason):
    player, own, _ = disputed
    with pytest.raises(ReasonRequired):
        disputes.open_dispute(player=player, bets=[own], reason=reason)
    dispute = disputes.open_dispute(player=player, bets=[own], reason="x" * 4000)
    with pytest.raises(ReasonRequired):
        disputes.add_note(dispute=dispute, author=UserFactory(), text=reason)
    assert not dispute.notes.exists()


def test_upheld_dispute_posts_its_adjustment_once_and_is_audited(disputed):
    player, own, _ = disputed
    officer, boss = make_operator(DISPUTE_OFFICER), make_operator(SUPERVISOR)
    dispute = disputes.open_dispute(player=player, bets=[own], reason="the dealer had 16")
    with pytest.raises(IllegalTransition):  # OPEN -> UPHELD skips the investigation
        disputes.resolve_dispute(dispute=dispute, upheld=True, resolution="ok", actor=boss)
    disputes.assign_dispute(dispute=dispute, assignee=officer, actor=boss)
    disputes.add_note(dispute=dispute, author=officer, text="video checked")
    for _ in range(2):  # a double submit posts once
        dispute = disputes.resolve_dispute(dispute=dispute, upheld=True, resolution="video shows a win",
                                           adjustment="20.00", actor=officer)
    assert dispute.status == "upheld" and dispute.resolved_at and dispute.resolved_by == officer
    assert balance(player) == FUNDS - 10 + 20
    assert LedgerTransaction.objects.filter(key=f"adjust:dispute:{dispute.pk}").count() == 1
    assert list(OperatorAction.objects.order_by("id").values_list("action", "actor")) == [
        ("assign_dispute", boss.pk), ("resolve_dispute", officer.pk)]
    assert dispute.notes.get().text == "video checked"
    with pytest.raises(AdjustmentNotAllowed):  # a different second decision
        disputes.resolve_dispute(dispute=dispute, upheld=False, resolution="no", actor=officer)


def test_rejected_dispute_moves_no_money_and_takes_no_adjustment(disputed):
    player, own, _ = disputed
    dispute = disputes.open_dispute(player=player, bets=[own], reason="?")
    disputes.assign_dispute(dispute=dispute, assignee=UserFactory(), actor="operator:x")
    with pytest.raises(AdjustmentNotAllowed):
        disputes.resolve_dispute(dispute=dispute, upheld=False, resolution="no", adjustment="5.00", actor="x")
    dispute = disputes.resolve_dispute(dispute=dispute, upheld=False, resolution="the record is right", actor="x")
    assert Dispute.objects.get().status == "rejected" and balance(player) == FUNDS - 10
    with pytest.raises(IllegalTransition):
        disputes.assign_dispute(dispute=dispute, assignee=UserFactory(), actor="x")


def test_manual_adjustment_is_idempotent_on_its_key_and_audited():
    player = PlayerFactory(funded="10.00")
    operator = make_operator(SUPERVISOR)
    for _ in range(2):
        disputes.manual_adjustment(player=player, currency="EUR", amount=Decimal("-2.50"), reason="goodwill reversal",
                                   actor=operator, key="ticket-7")
    assert balance(player) == Decimal("7.50")
    action = OperatorAction.objects.get()
    assert (action.action, action.actor, action.payload["amount"]) == ("manual_adjustment", operator, "-2.50")
    with pytest.raises(ReasonRequired):
        disputes.manual_adjustment(player=player, currency="EUR", amount="1.00", reason="", actor=operator, key="t-8")


def test_adjustments_stay_within_the_operators_limit(settings, disputed):
    """The service enforces the limits, whatever page or script calls it: a Dispute officer up to
    DISPUTE_OFFICER_ADJUSTMENT_LIMIT, a supervisor any amount, a user without either none."""
    settings.DISPUTE_OFFICER_ADJUSTMENT_LIMIT = Decimal("100.00")
    player, own, _ = disputed
    before = balance(player)
    dispute = disputes.open_dispute(player=player, bets=[own], reason="the dealer had 16")
    officer, boss, nobody = make_operator(DISPUTE_OFFICER), make_operator(SUPERVISOR), UserFactory()
    disputes.manual_adjustment(player=player, currency="EUR", amount="100.00", reason="goodwill", actor=officer,
                               key="a", dispute=dispute)
    for actor, amount in ((officer, "100.01"), (officer, "-100.01"), (nobody, "0.01")):
        with pytest.raises(AdjustmentLimitExceeded):
            disputes.manual_adjustment(player=player, currency="EUR", amount=amount, reason="goodwill", actor=actor,
                                       key=f"{actor.pk}:{amount}")
    disputes.manual_adjustment(player=player, currency="EUR", amount="500.00", reason="goodwill", actor=boss, key="b")
    assert balance(player) == before + Decimal("600.00")
    assert OperatorAction.objects.filter(action="manual_adjustment").count() == 2


def test_an_open_dispute_decided_from_its_page_is_assigned_to_the_decider_first(disputed):
    player, own, _ = disputed
    officer = make_operator(DISPUTE_OFFICER)
    dispute = disputes.open_dispute(player=player, bets=[own], reason="the dealer had 16")
    with pytest.raises(AdjustmentLimitExceeded):  # refused: not even the assignment is kept
        disputes.decide_dispute(dispute=dispute, upheld=True, resolution="ok", adjustment="500.00", actor=officer)
    assert Dispute.objects.get().status == "open" and not OperatorAction.objects.exists()
    dispute, _ = disputes.decide_dispute(dispute=dispute, upheld=True, resolution="video", adjustment="5.00",
                                         actor=officer)
    assert (dispute.status, dispute.assignee, dispute.adjustment) == ("upheld", officer, Decimal("5.00"))
    assert list(OperatorAction.objects.order_by("id").values_list("action", flat=True)) == [
        "assign_dispute", "resolve_dispute"]
