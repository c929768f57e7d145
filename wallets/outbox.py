"""The outbox: the seamless credits, rollbacks and corrections waiting for their operators' wallets,
delivered in order per player and retried until the wallet answers (docs/wallet-api.md, "What the
platform promises").

A movement is taken for an attempt by pushing its ``next_attempt_at`` past the call's timeout (a
lease, also kept in ``leased_until`` until the attempt is recorded), so two deliverers do not send
it at once and a deliverer that dies leaves it to the next. An attempt whose outcome is unknown is
retried after 1 s, doubling to 60 s; a player's next movement waits until the one before it is
acknowledged. A supervisor may send a failed movement again now (``retry``). Stakes are not the outbox's: they are
sent once, synchronously (``wallets.seamless.send_debits``); the outbox only recovers the stakes a
crash left behind (``recover_stakes``).
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Min, Q
from django.utils import timezone

from . import client, pg
from .exceptions import NotRetryable
from .journal import fields_of, record, save_attempts
from .models import WalletMovement

State = WalletMovement.State
#: The outbox's movements: credits, rollbacks, and the debits that take money back.
OUTBOX = Q(call__in=[WalletMovement.Call.CREDIT, WalletMovement.Call.ROLLBACK]) | Q(kind="correction")
#: The longest wait between two attempts, in seconds (1 s doubling up to it).
MAX_BACKOFF = 60


def backoff(attempts):
    """Seconds before the next attempt after ``attempts`` failed ones: 1, 2, 4 ... up to ``MAX_BACKOFF``."""
    return min(MAX_BACKOFF, 2 ** max(0, attempts - 1))


def _oldest(players):
    """``{player_id: (id, next_attempt_at)}`` of the oldest PENDING outbox movement of each of
    ``players`` (player ids; None: every player): the one each player's delivery waits on."""
    if connection.vendor == "postgresql":
        return pg.oldest(players)
    pending = WalletMovement.objects.filter(OUTBOX, state=State.PENDING)
    if players is not None:
        pending = pending.filter(player__in=players)
    firsts = dict(pending.values("player").annotate(first=Min("pk")).values_list("player", "first"))
    due = dict(WalletMovement.objects.filter(pk__in=firsts.values()).values_list("pk", "next_attempt_at"))
    return {player: (pk, due[pk]) for player, pk in firsts.items()}


def _heads(players, now):
    """The oldest PENDING outbox movement of each of ``players`` (player ids; None: every player)
    that is due now: ``{player_id: movement id}``. A player whose oldest is not due yet sends nothing."""
    return {player: pk for player, (pk, at) in _oldest(players).items() if at is not None and at <= now}


def _claim(ids, now):
    """Take the movements ``ids`` still PENDING and due for one attempt (their lease); returns them
    with operator, player and currency loaded."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            return pg.claim(ids, now)
        taken = list(WalletMovement.objects.select_for_update(skip_locked=True, of=("self",))
                     .filter(pk__in=ids, state=State.PENDING, next_attempt_at__lte=now)
                     .select_related("operator", "player", "currency", "reference"))
        leases = defaultdict(list)  # one lease per operator (its timeout): one UPDATE each, not a CASE per row
        for m in taken:
            m.next_attempt_at = m.leased_until = now + timedelta(milliseconds=2 * m.operator.wallet_timeout_ms + 1000)
            leases[m.leased_until].append(m.pk)
        for until, pks in leases.items():
            WalletMovement.objects.filter(pk__in=pks).update(next_attempt_at=until, leased_until=until)
    return taken


@dataclass
class Delivery:
    """What one ``deliver`` did: ``acknowledged`` and ``retried`` movements (attempts)."""

    acknowledged: int = 0
    retried: int = 0


def deliver(players=None, *, now=None):
    """Send the due outbox movements of ``players`` (player ids; None: all), oldest first per player,
    each operator's at once (``WALLET_CONCURRENCY`` in flight), pass after pass until none is due.
    Returns a ``Delivery``. Never raises for a wallet's answer."""
    delivery = Delivery()
    while True:
        now = now or timezone.now()
        taken = _claim(list(_heads(players, now).values()), now)
        if not taken:
            return delivery
        by_operator = defaultdict(list)
        for m in taken:
            by_operator[m.operator_id].append(m)
        calls = []
        for group in by_operator.values():
            answers = client.send_many(group[0].operator, [(m.call, fields_of(m)) for m in group])
            answered = timezone.now()
            for m, answer in zip(group, answers):
                calls.append(record(m, answer))
                _read(m, answer.outcome, answered)
        save_attempts(taken, calls, ["state", "status", "attempts", "last_error", "acknowledged_at",
                                     "next_attempt_at", "leased_until", "failing_since"])
        acknowledged = [m for m in taken if m.state == State.OK]
        delivery.acknowledged += len(acknowledged)
        delivery.retried += sum(m.state == State.PENDING for m in taken)
        players, now = sorted({m.player_id for m in acknowledged}), None
        if not players:
            return delivery


def _read(movement, outcome, now):
    """Set ``movement``'s state after an attempt of ``outcome`` (its lease ends)."""
    movement.leased_until = None
    if outcome == "ok":
        movement.state, movement.acknowledged_at, movement.failing_since = State.OK, now, None
    elif outcome in ("failed", "refused"):  # a correction refused for funds, a duplicate: never retried
        movement.state = State.FAILED
        movement.failing_since = movement.failing_since or now
    else:
        movement.next_attempt_at = now + timedelta(seconds=backoff(movement.attempts))
        movement.failing_since = movement.failing_since or now


def waiting(players):
    """Those of ``players`` (player ids) whose delivery is not done: ``(player ids, when the first
    of them is due)`` from their oldest PENDING outbox movements (a retry's backoff, a lease, or due
    now); ``([], None)`` when every movement of theirs is acknowledged or failed for good."""
    oldest = _oldest(players)
    return sorted(oldest), min((at for _, at in oldest.values() if at is not None), default=None)


def undelivered(round_refs):
    """How many outbox movements of the rounds ``round_refs`` (``round_ref`` strings) are still
    PENDING: not yet acknowledged by their operators' wallets."""
    return WalletMovement.objects.filter(OUTBOX, state=State.PENDING, round_ref__in=round_refs).count()


def retry_refusal(movement, now=None):
    """Why ``movement`` cannot be sent again now, as a phrase; None when it can (``retry``): a
    FAILED outbox movement, or a PENDING one that has failed and that no deliverer is sending."""
    now = now or timezone.now()
    if not WalletMovement.objects.filter(OUTBOX, pk=movement.pk).exists():
        return "a stake debit is sent once, never again (its rollback is the outbox's)"
    if movement.state == State.OK:
        return "the operator's wallet has acknowledged it"
    if movement.state == State.PENDING and movement.failing_since is None:
        return "it has not failed: it is sent in its turn"
    if movement.state == State.PENDING and movement.leased_until and movement.leased_until > now:
        return "it is being sent at this moment"
    if movement.state not in (State.PENDING, State.FAILED):
        return f"it was answered for good ({movement.state})"
    return None


def retry(movement_id, *, now=None):
    """A supervisor's retry of the outbox movement ``movement_id``, in the caller's transaction
    (the movement's row locked): FAILED becomes PENDING, due ``now``; a PENDING one waiting for its
    backoff is due ``now``. Its player's earlier PENDING movements still go first. Returns ``(the
    movement, its state before)``; raises ``NotRetryable`` (``retry_refusal``) and changes
    nothing then. The caller queues its delivery (``wallets.port.retry``)."""
    now = now or timezone.now()
    with transaction.atomic():
        movement = WalletMovement.objects.select_for_update().filter(pk=movement_id).first()
        if movement is None:
            raise NotRetryable(f"there is no wallet movement {movement_id}")
        refusal = retry_refusal(movement, now)
        if refusal:
            raise NotRetryable(f"movement {movement.key} cannot be sent again now: {refusal}")
        was = movement.state
        movement.state, movement.next_attempt_at = State.PENDING, now
        movement.save(update_fields=["state", "next_attempt_at"])
    return movement, was


def recover_stakes(*, older_than=None, now=None):
    """Roll back the stake debits a crash left: a debit still PENDING (written, maybe sent, its
    answer never read) or answered OK without the bet it was for (its posting never written), more
    than ``older_than`` seconds (default ``WALLET_STAKE_RECOVERY_SECONDS``) after it was written.
    A PENDING one becomes UNKNOWN. Returns the players whose rollbacks were written (to deliver)."""
    seconds = settings.WALLET_STAKE_RECOVERY_SECONDS if older_than is None else older_than
    cutoff = (now or timezone.now()) - timedelta(seconds=seconds)
    stale = WalletMovement.objects.filter(~OUTBOX, call=WalletMovement.Call.DEBIT, created_at__lte=cutoff,
                                          rollbacks__isnull=True)
    with transaction.atomic():
        lost = list(stale.filter(Q(state=State.PENDING) | Q(state=State.OK, ledger_key__isnull=True))
                    .select_for_update(of=("self",)))
        WalletMovement.objects.filter(pk__in=[m.pk for m in lost if m.state == State.PENDING]).update(
            state=State.UNKNOWN, last_error="no answer recorded: the platform stopped while sending")
        return write_rollbacks([m.key for m in lost])


def write_rollbacks(keys):
    """Write the rollback (``rollback:<its key>``) of each debit movement of ``keys``, in the
    caller's transaction; a debit rolled back before keeps its rollback. Returns the players they
    are for (to deliver once the transaction commits)."""
    debits = list(WalletMovement.objects.filter(key__in=keys, call=WalletMovement.Call.DEBIT))
    WalletMovement.objects.bulk_create([
        WalletMovement(key=f"rollback:{d.key}", call=WalletMovement.Call.ROLLBACK, kind=d.kind,
                       operator_id=d.operator_id, player_id=d.player_id, currency_id=d.currency_id, amount=d.amount,
                       reference=d, round_ref=d.round_ref, table_ref=d.table_ref, bets=d.bets,
                       next_attempt_at=timezone.now()) for d in debits], ignore_conflicts=True)
    return {d.player_id for d in debits}
