"""The seamless adapter: a seamless player's money moves at its operator's wallet
(docs/wallet-api.md) and the ledger's journal wallet records it.

- Stakes: a debit movement is written (PENDING) before its call, sent once, and read: OK, REFUSED
  or, when the outcome is unknown, UNKNOWN with its rollback queued (never sent again).
- Credits, rollbacks, corrections: outbox movements written in the transaction of what causes them,
  delivered after it commits (``wallets.outbox``); a supervisor's retry of one (``retry``).
"""

from collections import defaultdict
from decimal import Decimal

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import LedgerTransaction
from accounts.services import Posting, post
from accounts.sql import insert_rows

from . import client, outbox
from .journal import fields_of, record, save_attempts
from .models import WalletMovement
from .tasks import queue_delivery

Kind = LedgerTransaction.Kind
State = WalletMovement.State
#: The ledger kind of a group's posting, by the protocol kind of its movement.
LEDGER_KIND = {"payout": Kind.PAYOUT, "refund": Kind.REFUND, "resettle": Kind.PAYOUT,
               "adjustment": Kind.ADJUSTMENT, "correction": Kind.REVERSAL}


def _outbox_movement(key, wallet, amount, kind, round_ref, table_ref, bets, ledger_key):
    credit = amount >= 0
    return WalletMovement(key=key, ledger_key=ledger_key, call=WalletMovement.Call.CREDIT if credit else
                          WalletMovement.Call.DEBIT, kind=kind if credit else "correction",
                          operator_id=wallet.operator_id, player_id=wallet.player_id, currency_id=wallet.currency_id,
                          amount=abs(amount), round_ref=round_ref, table_ref=table_ref, bets=sorted(set(bets)),
                          next_attempt_at=timezone.now())


def write_outbox(moves, closed):
    """Write the seamless ``moves`` (``port.Move`` on journal wallets) as one posting and one
    outbox movement per group, and the zero credits of ``closed`` (``(group, wallet, kind,
    round_ref, table_ref, bets)``), in the caller's transaction; deliver them after it commits.
    Returns ``[(wallet, LedgerTransaction)]`` of the groups' postings (none for a group that nets
    to zero)."""
    groups = defaultdict(list)
    for m in moves:
        groups[m.group].append(m)
    postings, movements, wallets = [], [], []
    for key, members in groups.items():
        first = members[0]
        net = sum((m.amount if m.to_player else -m.amount for m in members), Decimal(0))
        kind = first.kind if net >= 0 else "correction"
        if net:
            source, destination = (first.house, first.wallet) if net > 0 else (first.wallet, first.house)
            postings.append(Posting(key=key, kind=LEDGER_KIND[kind], source=source, destination=destination,
                                    amount=abs(net), memo=first.memo))
            wallets.append(first.wallet)
        movements.append(_outbox_movement(key, first.wallet, net, first.kind, first.round_ref, first.table_ref,
                                          [m.bet for m in members if m.bet is not None], key if net else None))
    movements += [_outbox_movement(key, wallet, Decimal(0), kind, round_ref, table_ref, bets, None)
                  for key, wallet, kind, round_ref, table_ref, bets in closed]
    posted = list(zip(wallets, post(postings)))
    queue_delivery({m.player_id for m in insert_rows(WalletMovement, movements)})
    return posted


# --- stakes ---------------------------------------------------------------------------------------

def open_debits(debits):
    """See ``port.open_debits``."""
    existing = {m.key: m for m in WalletMovement.objects.filter(key__in=[d.key for d in debits])}
    new = [WalletMovement(key=d.key, call=WalletMovement.Call.DEBIT, kind=d.kind, operator_id=d.wallet.operator_id,
                          player_id=d.wallet.player_id, currency_id=d.wallet.currency_id, amount=d.amount,
                          round_ref=d.round_ref, table_ref=d.table_ref, bets=list(d.bets), claim=d.claim)
           for d in debits if d.key not in existing]
    existing.update((m.key, m) for m in insert_rows(WalletMovement, new))
    return existing


def claims(round_ref, players):
    """See ``port.claims``."""
    live = WalletMovement.objects.filter(
        Q(state=State.PENDING) | Q(state=State.OK, ledger_key__isnull=True, rollbacks__isnull=True),
        call=WalletMovement.Call.DEBIT, kind="stake", round_ref=round_ref).exclude(claim="")
    if players is not None:
        live = live.filter(player_id__in=players)
    return {(player, claim): key for player, claim, key in live.values_list("player_id", "claim", "key")}


def send_debits(movements):
    """See ``port.send_debits``."""
    movements = {m.key: m for m in movements}
    pending = [m for m in movements.values() if m.state == State.PENDING and m.call == WalletMovement.Call.DEBIT]
    by_operator = defaultdict(list)
    for m in WalletMovement.objects.filter(pk__in=[m.pk for m in pending]).select_related(
            "operator", "player", "currency"):
        by_operator[m.operator_id].append(m)
    calls, now = [], timezone.now()
    for group in by_operator.values():
        answers = client.send_many(group[0].operator, [("debit", fields_of(m)) for m in group])
        for m, answer in zip(group, answers):
            calls.append(record(m, answer))
            m.state = {"ok": State.OK, "refused": State.REFUSED, "failed": State.FAILED}.get(answer.outcome,
                                                                                           State.UNKNOWN)
            m.acknowledged_at = now if m.state == State.OK else None
            movements[m.key] = m
    with transaction.atomic():
        sent = [m for group in by_operator.values() for m in group]
        save_attempts(sent, calls, ["state", "status", "attempts", "last_error", "acknowledged_at"])
        roll_back([m.key for m in sent if m.state == State.UNKNOWN])
    return movements


def confirm_debits(ledger_keys):
    """Mark each debit movement of ``ledger_keys`` (``{movement key: ledger key}``) as standing for
    its ledger posting, in the caller's transaction (one UPDATE per 1,000 movements)."""
    pairs = list(ledger_keys.items())
    table = connection.ops.quote_name(WalletMovement._meta.db_table)
    with connection.cursor() as cursor:
        for start in range(0, len(pairs), 1000):
            chunk = pairs[start:start + 1000]
            cursor.execute(f"UPDATE {table} SET ledger_key = v.column2 FROM (VALUES "
                           + ", ".join(["(%s, %s)"] * len(chunk)) + f") AS v WHERE {table}.key = v.column1",
                           [x for pair in chunk for x in pair])


def roll_back(keys):
    """Queue the rollback of each debit movement of ``keys`` (``rollback:<its key>``), in the
    caller's transaction; delivered after it commits. A debit rolled back before keeps its rollback."""
    queue_delivery(outbox.write_rollbacks(keys))


def drop_unkept(keys):
    """Queue, in a transaction of its own, the rollback of each debit movement of ``keys`` answered
    OK that stands for no ledger posting (rows locked: a posting committing meanwhile keeps its
    debit). Returns the players they are for."""
    with transaction.atomic():
        unkept = list(WalletMovement.objects.select_for_update().filter(
            key__in=keys, call=WalletMovement.Call.DEBIT, state=State.OK, ledger_key__isnull=True)
            .values_list("key", "player_id"))
        roll_back([key for key, _ in unkept])
    return {player for _, player in unkept}


def deliver(players):
    """Deliver the due outbox movements of ``players`` (player ids) now, in this process."""
    outbox.deliver(sorted(players))


def retry(movement_id):
    """See ``port.retry``."""
    movement, was = outbox.retry(movement_id)
    queue_delivery({movement.player_id})
    return movement, was
