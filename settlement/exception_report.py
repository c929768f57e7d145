"""The exception report (GLI-19, UKGC RTS style): every operator action that changed money or the
rules outside normal play, one ``ExceptionEntry`` per operator it touched, written by the action's
service in the action's transaction, with the values before and after, the money it moved and the
ledger transactions it posted.

- a void, or the reversal of a settled round, and a resettle: one line per operator with bets in
  the round, each with that operator's players' bets only (``bets``, ``staked``, ``returned``);
- a manual adjustment and a dispute decision: the player's wallet balance before and after;
- a change of a table's pay tables: the odds in force before and after (the provider's line).

Money is a decimal string in the currency's minor units in ``before`` / ``after``, ``Decimal`` in
``amount`` (what the action credited the operator's players, signed).
"""

from collections import defaultdict
from decimal import Decimal

from django.db.models import Count, Sum

from accounts.models import LedgerEntry
from accounts.money import amount_string
from wagering.models import Bet, BetExtra

from . import audit
from .models import ExceptionEntry, OperatorAction

Kind = ExceptionEntry.Kind


def round_money(round_):
    """``{operator id: {"bets", "staked", "returned"}}`` of ``round_``'s bets as they stand, per
    operator of their players (``Decimal`` major units; ``returned`` None while no bet of the
    operator's has one). Two grouped queries."""
    money = {}
    for row in (Bet.objects.filter(round=round_).order_by().values("player__operator_id")
                .annotate(bets=Count("pk"), staked=Sum("stake"), returned=Sum("returned"))):
        money[row["player__operator_id"]] = {"bets": row["bets"], "staked": row["staked"], "returned": row["returned"]}
    for row in (BetExtra.objects.filter(bet__round=round_).order_by().values("bet__player__operator_id")
                .annotate(total=Sum("amount"))):
        money[row["bet__player__operator_id"]]["staked"] += row["total"]
    return money


def _shown(money, minor_units):
    return {"bets": money["bets"], "staked": amount_string(money["staked"], minor_units),
            "returned": amount_string(money["returned"], minor_units)}


def transactions_by_operator(posted):
    """``{operator id: [ledger transaction ids]}`` of ``posted`` (``wallets.port.move``'s pairs)."""
    found = defaultdict(list)
    for wallet, txn in posted:
        found[wallet.operator_id].append(txn.pk)
    return found


def record_round(*, action, kind, round_, state_before, before, posted, correction_before=None):
    """The lines of a void, reversal or resettle (``kind``) of ``round_`` (its table and currency
    loaded, as it stands after), audited as ``action``: for each operator in ``before``
    (``round_money`` before the action) or after it, its players' bets, staked and returned
    before and after, the round's state (``state_before``: before) and, for a resettle, the
    correction (``correction_before`` and the one after, ``correction_before + 1``); ``amount``
    is the change in what they were returned; ``posted``: the ledger transactions written."""
    after = round_money(round_)
    units = round_.table.currency.minor_units
    ids = transactions_by_operator(posted)
    lines = []
    for operator_id in sorted(before.keys() | after.keys()):
        was, now = before.get(operator_id), after.get(operator_id)
        shown_before = {"state": state_before, **(_shown(was, units) if was else {})}
        shown_after = {"state": round_.state, **(_shown(now, units) if now else {})}
        if correction_before is not None:
            shown_before["correction"], shown_after["correction"] = correction_before, correction_before + 1
        amount = (now and now["returned"] or Decimal(0)) - (was and was["returned"] or Decimal(0))
        lines.append(ExceptionEntry(kind=kind, action=action, operator_id=operator_id, table=round_.table,
                                    round=round_, currency_id=round_.table.currency_id, amount=amount,
                                    before=shown_before, after=shown_after, transactions=sorted(ids[operator_id]),
                                    created_at=action.created_at))
    ExceptionEntry.objects.bulk_create(lines)
    return lines


def record_wallet(*, action, kind, wallet, transaction, dispute=None, before=None, after=None):
    """The line of a manual adjustment or a dispute decision (``kind``) on ``wallet`` (a player's,
    its currency loaded), audited as ``action``: its balance before and after ``transaction`` (the
    ledger transaction posted, or None: no money moved), with ``before`` / ``after`` (the
    dispute's status and decision) added."""
    units = wallet.currency.minor_units
    before, after = dict(before or {}), dict(after or {})
    amount = None
    if transaction is not None:
        amount, balance_after = (LedgerEntry.objects.filter(transaction=transaction, account=wallet)
                                 .values_list("amount", "balance_after").get())
        before["balance"] = amount_string(balance_after - amount, units)
        after["balance"] = amount_string(balance_after, units)
    return ExceptionEntry.objects.create(
        kind=kind, action=action, operator_id=wallet.operator_id, player_id=wallet.player_id, dispute=dispute,
        currency_id=wallet.currency_id, amount=amount, before=before, after=after,
        transactions=[transaction.pk] if transaction is not None else [], created_at=action.created_at)


def record_pay_tables(*, table, before, actor, reason):
    """Audit a change of ``table``'s pay tables (saved already; ``before``: the ``RuleSet`` in force
    until then) by ``actor`` for ``reason``, and write its line: the odds in force before and after
    (``{bet type: {pattern: "odds"}}``, N of N:1); the provider's (no operator). Raises
    ``ReasonRequired``."""
    action = audit.record(actor=actor, action=OperatorAction.Action.EDIT_PAY_TABLES, target=table,
                          reason=reason, pay_tables=table.pay_tables)
    return ExceptionEntry.objects.create(kind=Kind.PAY_TABLES, action=action, table=table,
                                         currency_id=table.currency_id, before={"pay_tables": _odds(before)},
                                         after={"pay_tables": _odds(table.rules())}, created_at=action.created_at)


def _odds(rules):
    return {bet: {pattern: str(odds) for pattern, odds in odds_of.items()} for bet, odds_of in rules.pay_tables.items()}


#: The exception report's CSV columns.
CSV_HEADER = ["at", "kind", "operator", "table", "round", "player", "dispute", "currency", "amount", "before",
              "after", "user", "reason", "transactions", "audit_row"]


def rows_for_csv(lines):
    """Rows of ``lines`` (an ``ExceptionEntry`` queryset) as tuples of ``CSV_HEADER``, streamed; the
    before and after values as ``key=value`` lists, the transaction ids space-separated."""
    for line in (lines.select_related("action", "operator", "table", "round", "player", "currency")
                 .order_by("-created_at", "-id").iterator(chunk_size=2000)):
        units = line.currency.minor_units if line.currency else 2
        yield (line.created_at, line.kind, line.operator.code if line.operator else "",
               line.table.code if line.table else "", line.round.title if line.round else "",
               line.player.game_code if line.player else "", line.dispute_id or "", line.currency_id or "",
               amount_string(line.amount, units) or "", values_text(line.before), values_text(line.after),
               line.action.actor_label, line.action.reason, " ".join(str(t) for t in line.transactions),
               line.action_id)


def values_text(values):
    """``before`` / ``after`` as one line: ``state=settled; bets=3; staked=30.00`` (nested pay tables
    as ``main.blackjack=1.5``)."""
    parts = []
    for key, value in values.items():
        if isinstance(value, dict):
            parts += [f"{key}.{inner}" for inner in values_text(value).split("; ") if inner]
        else:
            parts.append(f"{key}={'' if value is None else value}")
    return "; ".join(parts)
