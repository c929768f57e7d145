"""Cancelling and voiding rounds (RULES 10): every stake refunded in full, extra stakes included
(``wagering.closing.refund_bets``: ``refund:<bet>``, ``refund:<extra key>``); a SETTLED round voided
is a reversal, every return taken back by new ledger entries (``reverse:<bet>``). The beat voids
rounds suspended longer than their table allows.

Each service locks the round row first (``tables.locks.lock_round``) and checks its state: a
void of a VOIDED round changes nothing. ``actor`` as in ``settlement.audit``.
"""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from accounts.models import LedgerTransaction
from tables.exceptions import IllegalTransition
from tables.locks import lock_round
from tables.models import Round, RoundEvent, Shoe
from tables.money import bet_move, round_money
from tables.services import event
from wagering import rollups
from wagering.closing import refund_bets
from wagering.models import Bet
from wallets.port import move

from . import audit, exception_report, plans
from .models import ExceptionEntry, OperatorAction
from .seals import seal_after_commit
from .services import flag_negative

State = Round.State
Kind = LedgerTransaction.Kind


@transaction.atomic
def cancel(*, round_id, reason, host_disconnected=False, actor="", actor_user=None):
    """Cancel a round still in play (OPEN, CLOSED or SUSPENDED; RULES 10): it takes no more bets
    nor moves, and is voided in the same transaction (as ``void_round``): every bet refunded in
    full, extra stakes included.
    ``host_disconnected`` (classic, RULES 10): the whole shoe is reshuffled (its cut card is marked
    out, so the next round needs a new shoe). Returns the ``Round``; a round already VOIDED
    (cancelled before, or voided) is returned as it is, unchanged: a replay, as a game server's
    retry of its cancel. Raises ``NotFound``, ``IllegalTransition`` (a round in no state to
    cancel: RESULTED, SETTLED, SETTLEMENT_FAILED)."""
    round_ = lock_round(round_id)
    if round_.state == State.VOIDED:
        return round_
    if round_.state not in Round.IN_PLAY or round_.cancelled_at:
        raise IllegalTransition(f"round {round_id} is {round_.state}{', cancelled' if round_.cancelled_at else ''}")
    round_.cancelled_at = timezone.now()
    round_.save(update_fields=["cancelled_at"])
    if host_disconnected and round_.rules().reshuffle_on_host_disconnect:
        Shoe.objects.filter(pk=round_.shoe_id).update(cut_card_out=True)
    event(round_, RoundEvent.Kind.CANCELLED, actor=actor, actor_user=actor_user, reason=reason,
          host_disconnected=host_disconnected).save()
    label, user = audit.actor_fields(actor, actor_user)
    return _void_locked(round_, audit.require_reason(reason), label, user)


def _reverse_locked(round_, label, user):
    """Undo a SETTLED round by new ledger entries (nothing is edited): every stake refunded in full,
    then every bet's current return taken back (``reverse:<bet>``, allowed to take a wallet negative,
    which flags it and raises an ``Alert``). Bets become REFUNDED. Returns ``(events to write,
    posted)``: ``posted`` the ledger transactions written (``wallets.port.move``)."""
    bets = list(round_.bets.filter(state=Bet.State.SETTLED).prefetch_related("extras"))
    events, posted = refund_bets(round_, bets, actor=label, actor_user=user)
    paid = [b for b in bets if b.returned]
    players = {b.player_id for b in paid}
    wallets, houses = round_money(round_, players)
    memo = f"void of settled round {round_.title}"
    posted += move([bet_move(round_, wallets, houses, key=f"reverse:{b.pk}", group="reverse", kind="correction",
                             ledger_kind=Kind.REVERSAL, player=b.player_id, amount=b.returned, to_player=False,
                             bet=b.pk, memo=memo) for b in paid], allow_negative=True)
    flag_negative(round_, players, "reversal")
    return events + [event(round_, "reversed", actor=label, actor_user=user, bet=b.pk, record_id=b.record_id,
                           returned=str(b.returned)) for b in paid], posted


def _void_locked(round_, reason, label, user):
    """Void a locked round (see ``void_round``); returns it. The rollups count what changed on the
    days its bets were placed on (``wagering.rollups``): a settled round's bets no longer stand,
    every refund is counted, and a round voided before betting closed counts its players.
    Raises ``IllegalTransition``."""
    settled, state_before = round_.state == State.SETTLED, round_.state
    before = exception_report.round_money(round_)
    counted = rollups.figures_of(round_.bets.all(), planner=rollups.ONE_ROUND)
    if round_.state == State.RESULTED:
        plans.forget(round_)  # its settlement, now never written
    round_.transition(State.VOIDED)
    if settled:
        events, posted = _reverse_locked(round_, label, user)
    else:
        events, posted = refund_bets(round_, list(round_.bets.filter(state__in=[Bet.State.PLACED, Bet.State.ACCEPTED])
                                                  .prefetch_related("extras")), actor=label, actor_user=user)
    round_.save(update_fields=["state", "voided_at"])
    rollups.record(rollups.difference(rollups.figures_of(round_.bets.all(), planner=rollups.ONE_ROUND), counted))
    if settled:
        rollups.round_reversed(round_)
    if round_.closed_at is None:
        rollups.players_of(round_)
    events.append(event(round_, RoundEvent.Kind.VOIDED, actor=label, actor_user=user, reason=reason,
                        reversal=settled))
    RoundEvent.objects.bulk_create(events, batch_size=5000)
    action = audit.record(actor=label, actor_user=user, target=round_, reason=reason,
                          action=OperatorAction.Action.REVERSE_ROUND if settled else OperatorAction.Action.VOID_ROUND)
    exception_report.record_round(action=action, kind=ExceptionEntry.Kind.REVERSAL if settled else
                                  ExceptionEntry.Kind.VOID, round_=round_, state_before=state_before, before=before,
                                  posted=posted)
    seal_after_commit(round_)
    return round_


@transaction.atomic
def void_round(*, round_id, reason, actor, actor_user=None):
    """Void a round (RULES 10): every stake refunded in full, extra stakes (double, split,
    insurance) included (``refund:<bet>``, ``refund:<extra key>``); bets REFUNDED; round VOIDED.
    Allowed from OPEN, CLOSED, SUSPENDED, RESULTED and SETTLEMENT_FAILED. From SETTLED it is a
    reversal: stakes refunded and every return taken back (``reverse:<bet>``) by new ledger
    entries; a wallet that cannot cover it goes negative, flagged, with an ``Alert``. An already
    VOIDED round is left alone (idempotent; one transaction, so a crash leaves nothing half done).
    ``reason``: non-blank text; ``actor``: a user or a label (``settlement.audit``). Writes an
    ``OperatorAction`` and its lines of the exception report (``settlement.exception_report``: one
    per operator with bets in the round). Returns ``(Round, voided)``: ``voided`` is False when the
    round was VOIDED already (read under the round's lock: of parallel voids one only is True).
    Raises ``NotFound``, ``ReasonRequired``."""
    reason = audit.require_reason(reason)
    label, user = audit.actor_fields(actor, actor_user)
    round_ = lock_round(round_id)
    if round_.state == State.VOIDED:
        return round_, False
    return _void_locked(round_, reason, label, user), True


def void_overdue_rounds(*, now=None):
    """Void every round SUSPENDED longer than its table's ``suspend_limit_seconds`` (RULES 10: not
    resolved quickly, the round is cancelled), each in its own transaction, re-checked under the
    round lock (a round resumed meanwhile is left alone). Returns the voided round ids."""
    now = now or timezone.now()
    candidates = (Round.objects.filter(state=State.SUSPENDED).select_related("table")
                  .order_by("pk").values_list("pk", "suspended_at", "table__suspend_limit_seconds"))
    voided = []
    for pk, *_ in [c for c in candidates if c[1] + timedelta(seconds=c[2]) <= now]:
        with transaction.atomic():
            round_ = lock_round(pk)
            limit = round_.table.suspend_limit_seconds
            if round_.state == State.SUSPENDED and round_.suspended_at + timedelta(seconds=limit) <= now:
                _void_locked(round_, f"suspended longer than {limit} s (RULES 10)", "system", None)
                voided.append(pk)
    return voided
