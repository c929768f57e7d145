"""Settling, voiding and resettling rounds (RULES.md 5, 8, 10; ROUND_RECORD.md "Result"), the
beat jobs' services, and the ledger's hourly check.

Each service runs in one database transaction that locks the round row first
(``tables.services.lock_round``, ``SELECT ... FOR UPDATE``), then checks the round's state: running
one twice, or twice at once, changes nothing the second time. Money moves only through
``accounts.services.post`` under unique keys:

- ``payout:<bet>``: a bet's return (stake back + winnings) when its round is settled;
- ``refund:<bet>``, ``refund:<extra key>``: a stake refunded in full by a void (``wagering``'s
  ``refund_bets``);
- ``reverse:<bet>``: a settled bet's return taken back when a SETTLED round is voided;
- ``resettle:<bet>:<n>``: the difference between correction ``n``'s return and the previous one.

Amounts are ``Decimal`` in the table currency's major units. ``actor`` is a Django user (an
operator) or a string label (``system``, ``game-server:<user>``); see ``settlement.audit``.
"""

import logging
import os
import sys
import time
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import Account, LedgerTransaction
from accounts.reconcile import reconcile
from accounts.services import Posting, post
from accounts.sql import execute_binary, number_array
from tables.engine import InvalidRecord as EngineInvalidRecord
from tables.engine import settle
from tables.models import Round, RoundEvent
from tables.replay import round_title
from tables.services import check_record, event, lock_round, table_house
from wagering.exceptions import IllegalTransition
from wagering.models import Bet
from wagering.services import player_wallets, refund_bets

from . import audit
from .details import distinct_details
from .models import Alert, OperatorAction, RoundCorrection, SettlementDetail

logger = logging.getLogger(__name__)
State = Round.State
Kind = LedgerTransaction.Kind


def pause_point(point):
    """Test-only: block at the named ``point`` (e.g. ``settle:inside``) when the setting
    ``SETTLEMENT_TEST_HOOKS`` is true and the environment variable ``SETTLEMENT_TEST_PAUSE`` names it,
    so that a test can kill the worker there. Does nothing otherwise."""
    if settings.SETTLEMENT_TEST_HOOKS and os.environ.get("SETTLEMENT_TEST_PAUSE") == point:
        sys.stderr.write(f"SETTLEMENT_TEST_PAUSE reached {point}\n")
        sys.stderr.flush()
        time.sleep(3600)


# --- writing results ------------------------------------------------------------------------------

def _write_results(round_, results, correction, now):
    """Write the engine's results for bets of ``round_`` (``{bet pk: BetResult}``): each distinct
    detail (``settlement.details``) as one ``SettlementDetail`` of ``correction``, then every bet
    SETTLED with its ``outcome``, ``returned``, ``settled_at=now`` and detail. On PostgreSQL the
    bets take ONE ``UPDATE ... FROM unnest`` (numbers sent as array literals, ``accounts.sql``);
    they are found through their round (its index), then joined to the rows: joined on the primary
    key alone, the planner hashed the whole bet table. Elsewhere ``bulk_update``."""
    details, index = distinct_details(results.values())
    rows = SettlementDetail.objects.bulk_create(
        [SettlementDetail(round=round_, correction=correction, detail=d, settled_at=now) for d in details])
    settlements = [rows[n].pk for n in index]
    if connection.vendor == "postgresql":
        execute_binary(
            f"UPDATE {Bet._meta.db_table} AS b SET state = %b::varchar, outcome = u.outcome, returned = u.returned, "
            "settled_at = %b::timestamptz, settlement_id = u.settlement "
            "FROM unnest(%s::bigint[], %b::varchar[], %s::numeric[], %s::bigint[]) AS u(id, outcome, returned, settlement) "
            "WHERE b.round_id = %b::bigint AND b.id = u.id",
            [Bet.State.SETTLED, now, number_array(results), [r.outcome for r in results.values()],
             number_array(r.returned for r in results.values()), number_array(settlements), round_.pk])
        return
    Bet.objects.bulk_update([Bet(pk=pk, state=Bet.State.SETTLED, outcome=r.outcome, returned=r.returned,
                                 settled_at=now, settlement_id=settlement)
                             for (pk, r), settlement in zip(results.items(), settlements)],
                            ["state", "outcome", "returned", "settled_at", "settlement"], batch_size=1000)


def _flag_negative(round_, players, why):
    """An ``Alert`` for each wallet of ``players`` (player ids) that ``why`` (a reversal or a
    resettle of ``round_``) took below zero (``accounts.services.post`` flagged it)."""
    negative = Account.objects.filter(kind=Account.Kind.WALLET, currency_id=round_.table.currency_id,
                                      player_id__in=players, balance__lt=0).select_related("player")
    Alert.objects.bulk_create([
        Alert(kind=Alert.Kind.NEGATIVE_WALLET, severity=Alert.Severity.WARNING, table=round_.table, round=round_,
              message=f"wallet of {w.player.code} is {w.balance} {w.currency_id} after the {why} of round "
                      f"{round_title(round_)}",
              payload={"wallet": w.pk, "player": w.player.code, "balance": str(w.balance)})
        for w in negative])


def _settle_locked(round_, result, bets, *, correction, actor="system", actor_user=None):
    """Write ``result`` (the engine's ``RoundResult``) for a locked round whose bets are not settled
    yet: bets SETTLED with outcome and return, each non-zero return posted as ``payout:<bet>``, each
    bet's detail stored (``SettlementDetail``), the ``settled`` event written, the round SETTLED. ``bets``:
    ``{record_id: (bet pk, player_id)}``."""
    results, paid = {}, []
    for record_id, r in result.bets.items():
        pk, player_id = bets[record_id]
        results[pk] = r
        if r.returned:
            paid.append((pk, player_id, r.returned))
    _write_results(round_, results, correction, timezone.now())
    event(round_, RoundEvent.Kind.SETTLED, actor=actor, actor_user=actor_user, correction=correction,
          bets=len(results), staked=str(result.total_staked), returned=str(result.total_returned)).save()
    # The payouts last: their wallet locks are held only until the commit (the players' next bets
    # wait for them). Only the paid players' wallets are read.
    house = table_house(round_.table)
    wallets = player_wallets({player_id for _, player_id, _ in paid}, round_.table.currency)
    post([Posting(key=f"payout:{pk}", kind=Kind.PAYOUT, source=house, destination=wallets[player_id], amount=returned)
          for pk, player_id, returned in paid])
    round_.transition(State.SETTLED)  # stamped once written (the bets carry when it began): its commit follows
    round_.failure_reason = ""
    round_.save(update_fields=["state", "settled_at", "failure_reason"])


def _fail(round_, reason):
    """Move a locked RESULTED round to SETTLEMENT_FAILED with ``reason`` and tell operators."""
    round_.transition(State.SETTLEMENT_FAILED)
    round_.failure_reason = reason
    round_.save(update_fields=["state", "failure_reason"])
    event(round_, "settlement_failed", actor="system", reason=reason).save()
    Alert.objects.create(kind=Alert.Kind.SETTLEMENT_FAILED, severity=Alert.Severity.CRITICAL, table=round_.table,
                         round=round_, message=f"round {round_title(round_)} cannot be settled: {reason}",
                         payload={"round": round_.pk, "reason": reason})
    logger.error("round %s cannot be settled: %s", round_.pk, reason)


# --- settle ---------------------------------------------------------------------------------------

def settle_round(*, round_id):
    """Settle a RESULTED round (RULES.md 5, 8; ROUND_RECORD.md "Result") with the rules engine, in one
    transaction: every bet SETTLED with its outcome and return, every non-zero return posted
    (``payout:<bet>``), each bet's engine detail kept (``SettlementDetail``), the ``settled`` event,
    the round SETTLED. A round in any other state is left alone (a duplicate or late delivery).
    A record the engine rejects, or whose bets differ from the round's, sends the round to
    SETTLEMENT_FAILED with the reason (and an ``Alert``) instead of raising. Returns the ``Round``.
    Raises ``NotFound``; database errors propagate (the task retries them)."""
    pause_point("settle:before")
    with transaction.atomic():
        round_ = lock_round(round_id)
        if round_.state != State.RESULTED:
            return round_
        table = round_.table
        try:
            result = settle(round_.record, rules=round_.rules(), minor_units=table.currency.minor_units)
        except (EngineInvalidRecord, ValueError) as e:
            _fail(round_, str(e))
            return round_
        bets = {rid: (pk, player) for rid, pk, player in Bet.objects.filter(
            round=round_, state__in=[Bet.State.PLACED, Bet.State.ACCEPTED]).values_list("record_id", "pk", "player_id")}
        if bets.keys() != result.bets.keys():
            _fail(round_, f"bets: the record's bets differ from the round's (unknown "
                          f"{sorted(result.bets.keys() - bets.keys())[:10]}, missing {sorted(bets.keys() - result.bets.keys())[:10]})")
            return round_
        _settle_locked(round_, result, bets, correction=0)
        pause_point("settle:inside")
    pause_point("settle:after_commit")
    return round_


# --- void -----------------------------------------------------------------------------------------

def _reverse_locked(round_, label, user):
    """Undo a SETTLED round by new ledger entries (nothing is edited): every stake refunded in full,
    then every bet's current return taken back (``reverse:<bet>``, allowed to take a wallet negative,
    which flags it and raises an ``Alert``). Bets become REFUNDED. Returns the events to write."""
    bets = list(round_.bets.filter(state=Bet.State.SETTLED).prefetch_related("extras"))
    events = refund_bets(round_, bets, actor=label, actor_user=user)
    paid = [b for b in bets if b.returned]
    players = {b.player_id for b in paid}
    house, wallets = table_house(round_.table), player_wallets(players, round_.table.currency)
    memo = f"void of settled round {round_title(round_)}"
    post([Posting(key=f"reverse:{b.pk}", kind=Kind.REVERSAL, source=wallets[b.player_id], destination=house,
                  amount=b.returned, memo=memo) for b in paid], allow_negative=True)
    _flag_negative(round_, players, "reversal")
    return events + [event(round_, "reversed", actor=label, actor_user=user, bet=b.pk, record_id=b.record_id,
                           returned=str(b.returned)) for b in paid]


def _void_locked(round_, reason, label, user):
    """Void a locked round (see ``void_round``); returns it. Raises ``IllegalTransition``."""
    settled = round_.state == State.SETTLED
    round_.transition(State.VOIDED)
    if settled:
        events = _reverse_locked(round_, label, user)
    else:
        events = refund_bets(round_, list(round_.bets.filter(state__in=[Bet.State.PLACED, Bet.State.ACCEPTED])
                                          .prefetch_related("extras")), actor=label, actor_user=user)
    round_.save(update_fields=["state", "voided_at"])
    events.append(event(round_, RoundEvent.Kind.VOIDED, actor=label, actor_user=user, reason=reason,
                        reversal=settled))
    RoundEvent.objects.bulk_create(events, batch_size=5000)
    audit.record(actor=label, actor_user=user, target=round_, reason=reason,
                 action=OperatorAction.Action.REVERSE_ROUND if settled else OperatorAction.Action.VOID_ROUND)
    return round_


@transaction.atomic
def void_round(*, round_id, reason, actor, actor_user=None):
    """Void a round (RULES.md 10): every stake refunded in full, extra stakes (double, split,
    insurance) included (``refund:<bet>``, ``refund:<extra key>``); bets REFUNDED; round VOIDED.
    Allowed from OPEN, CLOSED, SUSPENDED, RESULTED and SETTLEMENT_FAILED. From SETTLED it is a
    reversal: stakes refunded and every return taken back (``reverse:<bet>``) by new ledger
    entries; a wallet that cannot cover it goes negative, flagged, with an ``Alert``. An already
    VOIDED round is left alone (idempotent; one transaction, so a crash leaves nothing half done).
    ``reason``: non-blank text; ``actor``: a user or a label (``settlement.audit``). Writes an
    ``OperatorAction``. Returns the ``Round``. Raises ``NotFound``, ``ReasonRequired``."""
    reason = audit.require_reason(reason)
    label, user = audit.actor_fields(actor, actor_user)
    round_ = lock_round(round_id)
    if round_.state == State.VOIDED:
        return round_
    return _void_locked(round_, reason, label, user)


# --- resettle -------------------------------------------------------------------------------------

@transaction.atomic
def resettle_round(*, round_id, corrected_record, reason, actor, actor_user=None):
    """Settle a corrected round record after a misread card is proven (RULES.md 10), keeping the
    original as evidence: a ``RoundCorrection`` (sequence n) is stored and the corrected record
    settled. A SETTLEMENT_FAILED round is then settled normally (``payout:<bet>``); a SETTLED round
    gets, per bet, only the difference new return - old return, as ``resettle:<bet>:<n>`` (a credit,
    or a debit that may take a wallet negative like a reversal: flagged, with an ``Alert``), its
    bets' outcome, return and detail updated. ``corrected_record``: a round record
    (ROUND_RECORD.md), validated by the engine against the round's bets (``check_record``).
    Writes an ``OperatorAction``. Returns the ``RoundCorrection``. Raises ``NotFound``,
    ``ReasonRequired``, ``IllegalTransition`` (other states), ``InvalidRecord``."""
    reason = audit.require_reason(reason)
    label, user = audit.actor_fields(actor, actor_user)
    round_ = lock_round(round_id)
    if round_.state not in (State.SETTLED, State.SETTLEMENT_FAILED):
        raise IllegalTransition(f"round {round_id} is {round_.state}: only a settled or failed round is resettled",
                                state=round_.state)
    result = check_record(round_, corrected_record)
    last = round_.corrections.order_by("-sequence").values_list("sequence", flat=True).first() or 0
    correction = RoundCorrection.objects.create(round=round_, sequence=last + 1, record=corrected_record,
                                                reason=reason, actor=user, actor_label=label)
    bets = {b.record_id: b for b in round_.bets.exclude(state=Bet.State.REFUNDED)}
    if round_.state == State.SETTLEMENT_FAILED:
        _settle_locked(round_, result, {rid: (b.pk, b.player_id) for rid, b in bets.items()},
                       correction=correction.sequence, actor=label, actor_user=user)
        diffs = {}
    else:
        diffs = _resettle_locked(round_, result, bets, correction.sequence, label, user)
    audit.record(actor=label, actor_user=user, target=round_, reason=reason,
                 action=OperatorAction.Action.RESETTLE_ROUND, correction=correction.sequence,
                 differences={rid: str(d) for rid, d in diffs.items()})
    return correction


def _resettle_locked(round_, result, bets, n, label, user):
    """Post the per-bet differences of a SETTLED round's correction ``n`` (see ``resettle_round``);
    returns ``{record_id: difference}`` of the bets whose return changed."""
    diffs = {rid: r.returned - (bets[rid].returned or 0) for rid, r in result.bets.items()}
    diffs = {rid: d for rid, d in diffs.items() if d}
    house = table_house(round_.table)
    wallets = player_wallets({bets[rid].player_id for rid in diffs}, round_.table.currency)
    credits, debits = [], []
    for rid, diff in diffs.items():
        bet = bets[rid]
        wallet, key = wallets[bet.player_id], f"resettle:{bet.pk}:{n}"
        if diff > 0:
            credits.append(Posting(key=key, kind=Kind.PAYOUT, source=house, destination=wallet, amount=diff))
        else:
            debits.append(Posting(key=key, kind=Kind.REVERSAL, source=wallet, destination=house, amount=-diff))
    post(credits)
    post(debits, allow_negative=True)
    _flag_negative(round_, {bets[rid].player_id for rid, d in diffs.items() if d < 0}, f"correction {n}")
    _write_results(round_, {bets[rid].pk: r for rid, r in result.bets.items()}, n, timezone.now())
    event(round_, "resettled", actor=label, actor_user=user, correction=n, returned=str(result.total_returned),
          differences={rid: str(d) for rid, d in diffs.items()}).save()
    return diffs


# --- beat jobs ------------------------------------------------------------------------------------

def unsettled_round_ids(*, older_than=None, now=None):
    """Ids of RESULTED rounds whose record arrived more than ``older_than`` seconds ago (default
    the setting ``SETTLEMENT_REDRIVE_AFTER_SECONDS``): their settle task was lost or is late.
    SETTLEMENT_FAILED rounds are not among them (never retried in a loop)."""
    seconds = settings.SETTLEMENT_REDRIVE_AFTER_SECONDS if older_than is None else older_than
    cutoff = (now or timezone.now()) - timedelta(seconds=seconds)
    return list(Round.objects.filter(state=State.RESULTED, resulted_at__lte=cutoff)
                .order_by("pk").values_list("pk", flat=True))


def alert_stuck_rounds(*, now=None):
    """A critical ``settlement_stuck`` ``Alert`` for each round still RESULTED more than the setting
    ``SETTLEMENT_STUCK_AFTER_SECONDS`` after its record arrived, once per round: the re-drive has
    sent its task again and again and it keeps failing on an error the service does not turn
    into SETTLEMENT_FAILED (it is retried each minute; operators now see it). Returns the ids of
    the rounds alerted."""
    stuck = unsettled_round_ids(older_than=settings.SETTLEMENT_STUCK_AFTER_SECONDS, now=now)
    known = set(Alert.objects.filter(kind=Alert.Kind.SETTLEMENT_STUCK, round_id__in=stuck)
                .values_list("round_id", flat=True))
    rounds = list(Round.objects.filter(pk__in=set(stuck) - known).select_related("table").order_by("pk"))
    Alert.objects.bulk_create([
        Alert(kind=Alert.Kind.SETTLEMENT_STUCK, severity=Alert.Severity.CRITICAL, table=r.table, round=r,
              message=f"round {round_title(r)} resulted at {r.resulted_at:%Y-%m-%d %H:%M:%S} UTC and is still "
                      "not settled: its settle task keeps failing (see the workers' log)",
              payload={"round": r.pk, "resulted_at": r.resulted_at.isoformat()})
        for r in rounds])
    return [r.pk for r in rounds]


def void_overdue_rounds(*, now=None):
    """Void every round SUSPENDED longer than its table's ``suspend_limit_seconds`` (RULES.md 10: not
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


def reconcile_ledger():
    """Run ``accounts.reconcile.reconcile`` and record any breach as a critical ``Alert``
    (``reconcile_breach``). Returns the ``ReconcileReport``."""
    report = reconcile()
    if not report.ok:
        Alert.objects.create(
            kind=Alert.Kind.RECONCILE_BREACH, severity=Alert.Severity.CRITICAL,
            message=f"ledger reconcile found {len(report.breaches)} breach(es): {report.breaches[0]}",
            payload={"breaches": report.breaches, "flagged": report.flagged,
                     "totals": {c: {k: str(v) for k, v in t.items()} for c, t in report.totals.items()}})
    return report
