"""Settling and resettling rounds (RULES 5, 8, 10; docs/round-record.md "Result").

Each service runs in one database transaction that locks the round row first
(``tables.locks.lock_round``), then checks the round's state: running one twice, or twice at once,
changes nothing the second time. Money moves only through ``accounts.services.post`` under unique
keys:

- ``payout:<bet>``: a bet's return (stake back + winnings) when its round is settled;
- ``resettle:<bet>:<n>``: the difference between correction ``n``'s return and the previous one.

Voids and reversals are ``settlement.voids``'s. Amounts are ``Decimal`` in the table currency's
major units. ``actor`` is a Django user (an operator) or a string label (``system``,
``game-server:<user>``); see ``settlement.audit``.
"""

import logging

from django.db import connection, transaction
from django.db.models import Max, Min
from django.utils import timezone

from accounts.models import Account, LedgerTransaction
from accounts.sql import execute_binary, number_array
from tables.exceptions import IllegalTransition, InvalidRecord, NotFound
from tables.locks import lock_round
from tables.models import Round, RoundEvent
from tables.money import bet_move, round_closing, round_money
from tables.services import event
from wagering import rollups
from wagering.models import Bet
from wagering.records import check_record
from wallets.port import move

from . import audit, exception_report, plans
from .exceptions import AlreadyResettled, BetsChanged, RecordUnchanged
from .memory import without_cyclic_gc
from .models import Alert, ExceptionEntry, OperatorAction, RoundCorrection, SettlementDetail
from .seals import seal_after_commit
from .selectors import effective_record

logger = logging.getLogger(__name__)
State = Round.State
Kind = LedgerTransaction.Kind
OPEN = [Bet.State.PLACED, Bet.State.ACCEPTED]


# --- writing results ------------------------------------------------------------------------------

def _write_results(round_, plan, correction, now, states):
    """Write ``plan`` (a ``settlement.plans.Plan`` of bets of ``round_``, each in one of ``states``):
    each distinct detail as one ``SettlementDetail`` of ``correction``, then every bet SETTLED with
    its ``outcome``, ``returned``, ``settled_at=now`` and detail. Returns ``(n, first, last)``: how
    many bets were written (a bet of the plan in another state is not), and their earliest and
    latest ``placed_at`` (None without bets). On PostgreSQL the bets take ONE ``UPDATE ... FROM
    unnest`` that returns those three: per bet only its id and its kind (numbers sent as array
    literals, ``accounts.sql``), each kind's outcome, return and detail taken by the kind from three
    short arrays; the bets are found through their round (its index), then joined to the rows, so
    that the planner reads the round's bets and never the whole bet table. Elsewhere
    ``bulk_update``."""
    rows = SettlementDetail.objects.bulk_create(
        [SettlementDetail(round=round_, correction=correction, detail=detail, settled_at=now)
         for detail, _, _ in plan.details])
    kinds = [(outcome, returned, row.pk) for (_, outcome, returned), row in zip(plan.details, rows)]
    if connection.vendor == "postgresql":
        return tuple(execute_binary(
            f"WITH written AS (UPDATE {Bet._meta.db_table} AS b SET state = %b::varchar, "
            "outcome = (%b::varchar[])[u.kind + 1], returned = (%s::numeric[])[u.kind + 1], "
            "settled_at = %b::timestamptz, settlement_id = (%s::bigint[])[u.kind + 1] "
            "FROM unnest(%s::bigint[], %s::integer[]) AS u(id, kind) "
            "WHERE b.round_id = %b::bigint AND b.id = u.id AND b.state = ANY(%b::varchar[]) RETURNING b.placed_at) "
            "SELECT count(*), min(placed_at), max(placed_at) FROM written",
            [Bet.State.SETTLED, [outcome for outcome, _, _ in kinds], number_array(r for _, r, _ in kinds), now,
             number_array(pk for _, _, pk in kinds), number_array(plan.bets), number_array(plan.kinds), round_.pk,
             list(states)])[0])
    n = Bet.objects.filter(state__in=states).bulk_update(
        [Bet(pk=pk, state=Bet.State.SETTLED, outcome=outcome, returned=returned, settled_at=now,
             settlement_id=settlement)
         for pk, (outcome, returned, settlement) in zip(plan.bets, (kinds[k] for k in plan.kinds))],
        ["state", "outcome", "returned", "settled_at", "settlement"], batch_size=1000)
    span = Bet.objects.filter(round=round_, state=Bet.State.SETTLED).aggregate(first=Min("placed_at"),
                                                                               last=Max("placed_at"))
    return n, span["first"], span["last"]


def flag_negative(round_, players, why):
    """An ``Alert`` for each wallet of ``players`` (player ids) that ``why`` (a reversal or a
    resettle of ``round_``) took below zero (``accounts.services.post`` flagged it); a journal
    wallet's balance is not the player's money (``Account.known_balance``): never alerted."""
    negative = Account.objects.filter(kind=Account.Kind.WALLET, currency_id=round_.table.currency_id,
                                      player_id__in=players, balance__lt=0, journal=False).select_related("player")
    Alert.objects.bulk_create([
        Alert(kind=Alert.Kind.NEGATIVE_WALLET, severity=Alert.Severity.WARNING, table=round_.table, round=round_,
              player=w.player,
              message=f"wallet of {w.player.game_code} is {w.balance} {w.currency_id} after the {why} of round "
                      f"{round_.title}",
              payload={"wallet": w.pk, "player": w.player.game_code, "balance": str(w.balance)})
        for w in negative])


def _settle_locked(round_, plan, *, correction, actor="system", actor_user=None, transactions=True):
    """Write ``plan`` (a ``settlement.plans.Plan``) for a locked round whose bets are not settled
    yet: bets SETTLED with outcome and return, each non-zero return posted as ``payout:<bet>``, each
    bet's detail stored (``SettlementDetail``), the ``settled`` event written, the bets counted in
    the rollups (``wagering.rollups.round_settled``, after the payouts), the round SETTLED, its seal
    queued (``settlement.seals``). Returns the payouts' ``[(wallet, LedgerTransaction)]``
    (``wallets.port.move``), or None without ``transactions``. Raises ``BetsChanged`` (nothing
    written: the caller's savepoint) when a bet of the plan is no longer open."""
    written, *span = _write_results(round_, plan, correction, timezone.now(), OPEN)
    if written != len(plan.bets):  # never, while only settling and voiding change a RESULTED round's bets
        raise BetsChanged(f"bets: {len(plan.bets) - written} of the {len(plan.bets)} bets the record settles "
                          "are no longer open")
    event(round_, RoundEvent.Kind.SETTLED, actor=actor, actor_user=actor_user, correction=correction,
          bets=len(plan.bets), staked=str(plan.staked), returned=str(plan.returned)).save()
    # Every player's wallet: the payouts', the seamless players' closing credits', the rollups'
    # operators. The payouts last: their wallet locks are held only until the commit (the players'
    # next bets wait for them).
    bets_of = plan.bets_of()
    wallets, houses = round_money(round_, bets_of.keys())
    posted = move([bet_move(round_, wallets, houses, key=f"payout:{pk}", group="payout", kind="payout",
                            ledger_kind=Kind.PAYOUT, player=player_id, amount=returned, bet=pk)
                   for pk, player_id, returned in plan.paid()], closing=round_closing(round_, wallets, bets_of),
                  transactions=transactions)
    rollups.round_settled(round_, plan.counted({pk: w.operator_id for pk, w in wallets.items()}), span)
    round_.transition(State.SETTLED)  # stamped once written (the bets carry when it began): its commit follows
    round_.failure_reason = ""
    round_.save(update_fields=["state", "settled_at", "failure_reason"])
    seal_after_commit(round_)
    return posted


def _fail(round_, reason):
    """Move a locked RESULTED round to SETTLEMENT_FAILED with ``reason`` and tell operators."""
    round_.transition(State.SETTLEMENT_FAILED)
    round_.failure_reason = reason
    round_.save(update_fields=["state", "failure_reason"])
    event(round_, "settlement_failed", actor="system", reason=reason).save()
    Alert.objects.create(kind=Alert.Kind.SETTLEMENT_FAILED, severity=Alert.Severity.CRITICAL, table=round_.table,
                         round=round_, message=f"round {round_.title} cannot be settled: {reason}",
                         payload={"round": round_.pk, "reason": reason})
    logger.error("round %s cannot be settled: %s", round_.pk, reason)


# --- settle ---------------------------------------------------------------------------------------

@without_cyclic_gc
@transaction.atomic(durable=True)
def settle_round(*, round_id):
    """Settle a RESULTED round (RULES 5, 8; docs/round-record.md "Result") by the rules engine, in one
    transaction: every bet SETTLED with its outcome and return, every non-zero return posted
    (``payout:<bet>``), each bet's engine detail kept (``SettlementDetail``), the ``settled`` event,
    the round SETTLED. What is written is the plan ``record_result`` kept when it checked the record
    (``settlement.plans``), taken in this transaction: a crash before the commit leaves it for the
    next try. A round without one (its record taken before plans were kept) is checked and
    computed from its record now. A round in any other state is left alone (a duplicate or late
    delivery). A record the engine rejects, or whose bets differ from the round's open bets, sends
    the round to SETTLEMENT_FAILED with the reason (and an ``Alert``) instead of raising. Returns
    the ``Round``. Raises ``NotFound``; database errors propagate (the task retries them)."""
    round_ = lock_round(round_id, record=False)
    if round_.state != State.RESULTED:
        return round_
    plan = plans.taken(round_)
    if plan is None:  # its record taken before plans were kept: checked again, as it was then
        try:
            plan = plans.plan_of(*check_record(round_, round_.record))
        except (InvalidRecord, ValueError) as e:
            _fail(round_, str(e))
            return round_
    try:
        with transaction.atomic():  # a savepoint: a plan whose bets changed writes nothing
            _settle_locked(round_, plan, correction=0, transactions=False)
    except BetsChanged as e:
        _fail(round_, str(e))
    return round_


# --- resettle -------------------------------------------------------------------------------------

def preview_resettle(*, round_id, corrected_record):
    """What resettling round ``round_id`` with ``corrected_record`` would return per bet, before
    anything is written: ``(round, [(Bet, new return)])`` for the bets the record settles, in id
    order (the round with its table and currency loaded). Raises ``NotFound``, ``InvalidRecord``,
    ``RecordUnchanged`` (the record the SETTLED round is settled on already)."""
    round_ = Round.objects.select_related("table__currency").filter(pk=round_id).first()
    if round_ is None:
        raise NotFound(f"no round {round_id}")
    result, _ = _checked_correction(round_, corrected_record)
    return round_, [(b, result.bets[b.record_id].returned)
                    for b in round_.bets.select_related("player").order_by("id") if b.record_id in result.bets]


def _checked_correction(round_, corrected_record):
    """``check_record`` of ``corrected_record`` for ``round_``: ``(the engine's result, the bets it
    holds)``; raises ``InvalidRecord``, or ``RecordUnchanged`` when ``round_`` is SETTLED on that
    record already (a failed round may be settled again on its own record)."""
    checked = check_record(round_, corrected_record)
    if round_.state == State.SETTLED and corrected_record == effective_record(round_):
        raise RecordUnchanged(f"the corrected record of round {round_.title} is the record it is settled on: "
                              "nothing to resettle")
    return checked


@without_cyclic_gc
@transaction.atomic(durable=True)
def resettle_round(*, round_id, corrected_record, reason, actor, actor_user=None, after_correction=None):
    """Settle a corrected round record after a misread card is proven (RULES 10), keeping the
    original as evidence: a ``RoundCorrection`` (sequence n) is stored and the corrected record
    settled. A SETTLEMENT_FAILED round is then settled normally (``payout:<bet>``); a SETTLED round
    gets, per bet, only the difference new return - old return, as ``resettle:<bet>:<n>`` (a credit,
    or a debit that may take a wallet negative like a reversal: flagged, with an ``Alert``), its
    bets' outcome, return and detail updated. ``corrected_record``: a round record
    (docs/round-record.md), validated by the engine against the round's bets (``check_record``).
    Writes an ``OperatorAction`` and its exception report lines (``settlement.exception_report``: one
    per operator with bets in the round). Returns the ``RoundCorrection``. Raises ``NotFound``,
    ``ReasonRequired``, ``IllegalTransition`` (other states), ``InvalidRecord``, ``RecordUnchanged``
    (the record the round is settled on already: nothing to correct), ``AlreadyResettled``
    (``after_correction``, the sequence of the correction the operator saw, 0 for none, is no
    longer the last one: a double submit or a concurrent resettle; nothing changes)."""
    reason = audit.require_reason(reason)
    label, user = audit.actor_fields(actor, actor_user)
    round_ = lock_round(round_id)
    last = round_.corrections.order_by("-sequence").values_list("sequence", flat=True).first() or 0
    if after_correction is not None and last != after_correction:
        raise AlreadyResettled(f"round {round_.title} was already resettled (correction {last}): nothing changed")
    if round_.state not in (State.SETTLED, State.SETTLEMENT_FAILED):
        raise IllegalTransition(f"round {round_id} is {round_.state}: only a settled or failed round is resettled",
                                state=round_.state)
    result, held = _checked_correction(round_, corrected_record)
    plan = plans.plan_of(result, held)
    state_before, before = round_.state, exception_report.round_money(round_)
    correction = RoundCorrection.objects.create(round=round_, sequence=last + 1, record=corrected_record,
                                                reason=reason, actor=user, actor_label=label)
    if round_.state == State.SETTLEMENT_FAILED:
        posted = _settle_locked(round_, plan, correction=correction.sequence, actor=label, actor_user=user)
        diffs = {}
    else:
        bets = {b.record_id: b for b in round_.bets.exclude(state=Bet.State.REFUNDED)}
        diffs, posted = _resettle_locked(round_, result, plan, bets, correction.sequence, label, user)
    action = audit.record(actor=label, actor_user=user, target=round_, reason=reason,
                          action=OperatorAction.Action.RESETTLE_ROUND, correction=correction.sequence,
                          differences={rid: str(d) for rid, d in diffs.items()})
    exception_report.record_round(action=action, kind=ExceptionEntry.Kind.RESETTLE, round_=round_,
                                  state_before=state_before, before=before, posted=posted, correction_before=last)
    return correction


def _resettle_locked(round_, result, plan, bets, n, label, user):
    """Post the per-bet differences of a SETTLED round's correction ``n`` (see ``resettle_round``;
    ``result``: the engine's, ``plan`` its ``Plan``, ``bets``: ``{record_id: Bet}``), write
    ``plan`` and add what it changed to the rollups; returns ``({record_id: difference} of the bets
    whose return changed, posted)``: ``posted`` the ledger transactions written
    (``wallets.port.move``)."""
    counted = Bet.objects.filter(round=round_, state=Bet.State.SETTLED)
    before = rollups.figures_of(counted, planner=rollups.ONE_ROUND)
    diffs = {rid: r.returned - (bets[rid].returned or 0) for rid, r in result.bets.items()}
    diffs = {rid: d for rid, d in diffs.items() if d}
    wallets, houses = round_money(round_, {bets[rid].player_id for rid in diffs})
    posted = move([bet_move(round_, wallets, houses, key=f"resettle:{bets[rid].pk}:{n}", group=f"resettle-{n}",
                            kind="resettle", ledger_kind=Kind.PAYOUT if diff > 0 else Kind.REVERSAL,
                            player=bets[rid].player_id, amount=abs(diff), to_player=diff > 0, bet=bets[rid].pk)
                   for rid, diff in diffs.items()], allow_negative=True)
    flag_negative(round_, {bets[rid].player_id for rid, d in diffs.items() if d < 0}, f"correction {n}")
    _write_results(round_, plan, n, timezone.now(), [Bet.State.SETTLED])
    rollups.record(rollups.difference(rollups.figures_of(counted, planner=rollups.ONE_ROUND), before))
    event(round_, "resettled", actor=label, actor_user=user, correction=n, returned=str(result.total_returned),
          differences={rid: str(d) for rid, d in diffs.items()}).save()
    seal_after_commit(round_)
    return diffs, posted
