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
from collections import defaultdict

from django.db import connection, transaction
from django.utils import timezone

from accounts.models import Account, LedgerTransaction
from accounts.sql import execute_binary, number_array
from tables.engine import InvalidRecord as EngineInvalidRecord
from tables.exceptions import IllegalTransition, NotFound
from tables.locks import lock_round
from tables.models import Round, RoundEvent
from tables.money import bet_move, round_closing, round_money
from tables.services import event
from wagering.models import Bet
from wagering.records import check_record
from wallets.port import move

from . import audit
from .details import distinct_details
from .exceptions import AlreadyResettled
from .models import Alert, OperatorAction, RoundCorrection, SettlementDetail

logger = logging.getLogger(__name__)
State = Round.State
Kind = LedgerTransaction.Kind


# --- writing results ------------------------------------------------------------------------------

def _write_results(round_, results, correction, now):
    """Write the engine's results for bets of ``round_`` (``{bet pk: BetResult}``): each distinct
    detail (``settlement.details``) as one ``SettlementDetail`` of ``correction``, then every bet
    SETTLED with its ``outcome``, ``returned``, ``settled_at=now`` and detail. On PostgreSQL the
    bets take ONE ``UPDATE ... FROM unnest`` (numbers sent as array literals, ``accounts.sql``);
    they are found through their round (its index), then joined to the rows, so that the planner
    reads the round's bets and never the whole bet table. Elsewhere ``bulk_update``."""
    details, index = distinct_details(results.values())
    rows = SettlementDetail.objects.bulk_create(
        [SettlementDetail(round=round_, correction=correction, detail=d, settled_at=now) for d in details])
    settlements = [rows[n].pk for n in index]
    if connection.vendor == "postgresql":
        execute_binary(
            f"UPDATE {Bet._meta.db_table} AS b SET state = %b::varchar, outcome = u.outcome, returned = u.returned, "
            "settled_at = %b::timestamptz, settlement_id = u.settlement "
            "FROM unnest(%s::bigint[], %b::varchar[], %s::numeric[], %s::bigint[]) "
            "AS u(id, outcome, returned, settlement) "
            "WHERE b.round_id = %b::bigint AND b.id = u.id",
            [Bet.State.SETTLED, now, number_array(results), [r.outcome for r in results.values()],
             number_array(r.returned for r in results.values()), number_array(settlements), round_.pk])
        return
    Bet.objects.bulk_update([Bet(pk=pk, state=Bet.State.SETTLED, outcome=r.outcome, returned=r.returned,
                                 settled_at=now, settlement_id=settlement)
                             for (pk, r), settlement in zip(results.items(), settlements)],
                            ["state", "outcome", "returned", "settled_at", "settlement"], batch_size=1000)


def flag_negative(round_, players, why):
    """An ``Alert`` for each wallet of ``players`` (player ids) that ``why`` (a reversal or a
    resettle of ``round_``) took below zero (``accounts.services.post`` flagged it)."""
    negative = Account.objects.filter(kind=Account.Kind.WALLET, currency_id=round_.table.currency_id,
                                      player_id__in=players, balance__lt=0).select_related("player")
    Alert.objects.bulk_create([
        Alert(kind=Alert.Kind.NEGATIVE_WALLET, severity=Alert.Severity.WARNING, table=round_.table, round=round_,
              player=w.player,
              message=f"wallet of {w.player.game_code} is {w.balance} {w.currency_id} after the {why} of round "
                      f"{round_.title}",
              payload={"wallet": w.pk, "player": w.player.game_code, "balance": str(w.balance)})
        for w in negative])


def _settle_locked(round_, result, bets, *, correction, actor="system", actor_user=None):
    """Write ``result`` (the engine's ``RoundResult``) for a locked round whose bets are not settled
    yet: bets SETTLED with outcome and return, each non-zero return posted as ``payout:<bet>``, each
    bet's detail stored (``SettlementDetail``), the ``settled`` event written, the round SETTLED. ``bets``:
    ``{record_id: (bet pk, player_id)}``."""
    results, paid, bets_of = {}, [], defaultdict(list)
    for record_id, r in result.bets.items():
        pk, player_id = bets[record_id]
        results[pk] = r
        bets_of[player_id].append(pk)
        if r.returned:
            paid.append((pk, player_id, r.returned))
    _write_results(round_, results, correction, timezone.now())
    event(round_, RoundEvent.Kind.SETTLED, actor=actor, actor_user=actor_user, correction=correction,
          bets=len(results), staked=str(result.total_staked), returned=str(result.total_returned)).save()
    # The payouts last: their wallet locks are held only until the commit (the players' next bets
    # wait for them). Only the paid players' wallets are read; the others' rounds are closed.
    wallets, houses = round_money(round_, {player_id for _, player_id, _ in paid})
    move([bet_move(round_, wallets, houses, key=f"payout:{pk}", group="payout", kind="payout",
                   ledger_kind=Kind.PAYOUT, player=player_id, amount=returned, bet=pk)
          for pk, player_id, returned in paid], closing=round_closing(round_, bets_of, bets_of=bets_of))
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
                         round=round_, message=f"round {round_.title} cannot be settled: {reason}",
                         payload={"round": round_.pk, "reason": reason})
    logger.error("round %s cannot be settled: %s", round_.pk, reason)


# --- settle ---------------------------------------------------------------------------------------

@transaction.atomic(durable=True)
def settle_round(*, round_id):
    """Settle a RESULTED round (RULES 5, 8; docs/round-record.md "Result") with the rules engine, in one
    transaction: every bet SETTLED with its outcome and return, every non-zero return posted
    (``payout:<bet>``), each bet's engine detail kept (``SettlementDetail``), the ``settled`` event,
    the round SETTLED. A round in any other state is left alone (a duplicate or late delivery).
    A record the engine rejects, or whose bets differ from the round's, sends the round to
    SETTLEMENT_FAILED with the reason (and an ``Alert``) instead of raising. Returns the ``Round``.
    Raises ``NotFound``; database errors propagate (the task retries them)."""
    round_ = lock_round(round_id)
    if round_.state != State.RESULTED:
        return round_
    try:
        result = round_.result_of(round_.record)
    except (EngineInvalidRecord, ValueError) as e:
        _fail(round_, str(e))
        return round_
    bets = {rid: (pk, player) for rid, pk, player in Bet.objects.filter(
        round=round_, state__in=[Bet.State.PLACED, Bet.State.ACCEPTED]).values_list("record_id", "pk", "player_id")}
    if bets.keys() != result.bets.keys():
        _fail(round_, f"bets: the record's bets differ from the round's (unknown "
                      f"{sorted(result.bets.keys() - bets.keys())[:10]}, "
                      f"missing {sorted(bets.keys() - result.bets.keys())[:10]})")
        return round_
    _settle_locked(round_, result, bets, correction=0)
    return round_


# --- resettle -------------------------------------------------------------------------------------

def preview_resettle(*, round_id, corrected_record):
    """What resettling round ``round_id`` with ``corrected_record`` would return per bet, before
    anything is written: ``(round, [(Bet, new return)])`` for the bets the record settles, in id
    order (the round with its table and currency loaded). Raises ``NotFound``, ``InvalidRecord``."""
    round_ = Round.objects.select_related("table__currency").filter(pk=round_id).first()
    if round_ is None:
        raise NotFound(f"no round {round_id}")
    result = check_record(round_, corrected_record)
    return round_, [(b, result.bets[b.record_id].returned)
                    for b in round_.bets.select_related("player").order_by("id") if b.record_id in result.bets]


@transaction.atomic(durable=True)
def resettle_round(*, round_id, corrected_record, reason, actor, actor_user=None, after_correction=None):
    """Settle a corrected round record after a misread card is proven (RULES 10), keeping the
    original as evidence: a ``RoundCorrection`` (sequence n) is stored and the corrected record
    settled. A SETTLEMENT_FAILED round is then settled normally (``payout:<bet>``); a SETTLED round
    gets, per bet, only the difference new return - old return, as ``resettle:<bet>:<n>`` (a credit,
    or a debit that may take a wallet negative like a reversal: flagged, with an ``Alert``), its
    bets' outcome, return and detail updated. ``corrected_record``: a round record
    (docs/round-record.md), validated by the engine against the round's bets (``check_record``).
    Writes an ``OperatorAction``. Returns the ``RoundCorrection``. Raises ``NotFound``,
    ``ReasonRequired``, ``IllegalTransition`` (other states), ``InvalidRecord``, ``AlreadyResettled``
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
    result = check_record(round_, corrected_record)
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
    wallets, houses = round_money(round_, {bets[rid].player_id for rid in diffs})
    move([bet_move(round_, wallets, houses, key=f"resettle:{bets[rid].pk}:{n}", group=f"resettle-{n}",
                   kind="resettle", ledger_kind=Kind.PAYOUT if diff > 0 else Kind.REVERSAL,
                   player=bets[rid].player_id, amount=abs(diff), to_player=diff > 0, bet=bets[rid].pk)
          for rid, diff in diffs.items()], allow_negative=True)
    flag_negative(round_, {bets[rid].player_id for rid, d in diffs.items() if d < 0}, f"correction {n}")
    _write_results(round_, {bets[rid].pk: r for rid, r in result.bets.items()}, n, timezone.now())
    event(round_, "resettled", actor=label, actor_user=user, correction=n, returned=str(result.total_returned),
          differences={rid: str(d) for rid, d in diffs.items()}).save()
    return diffs
