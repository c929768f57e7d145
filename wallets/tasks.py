"""Celery tasks of the wallet port: deliver the outbox, re-drive it, recover the stakes a crash
left. Each takes ids (or nothing), calls one service, and is safe to run twice or at once (a
movement is leased for each attempt; the operator's wallet is idempotent by transaction id).

Beat jobs (migration ``0002_beat_schedule``): ``wallets.redrive`` every 10 seconds (every due
movement, whatever task was lost), ``wallets.recover_stakes`` every minute.
"""

from celery import shared_task
from django.db import OperationalError, transaction

from . import outbox

RETRY = {"autoretry_for": (OperationalError,), "max_retries": 5, "retry_backoff": 2, "retry_backoff_max": 60}


def queue_delivery(players):
    """Deliver the outbox movements of ``players`` (player ids) once the current transaction commits."""
    players = sorted(players)
    if players:
        transaction.on_commit(lambda: deliver_movements.delay(players))


@shared_task(name="wallets.deliver_movements", **RETRY)
def deliver_movements(players):
    """Deliver ``players``' due outbox movements (``outbox.deliver``), then come back for those of
    them still waiting (a retry's backoff, another deliverer's lease) when the first is due, until
    none is left (a task lost on the way is beat's ``redrive``'s). In-process (no broker) it cannot
    wait: whoever runs the platform re-drives. Returns ``[acknowledged, retried]``."""
    delivery = outbox.deliver(players)
    waiting, due = outbox.waiting(players)
    if waiting and not deliver_movements.app.conf.task_always_eager:
        deliver_movements.apply_async((waiting,), eta=due)
    return [delivery.acknowledged, delivery.retried]


@shared_task(name="wallets.redrive", **RETRY)
def redrive():
    """Beat: deliver every due outbox movement (a task lost, a wallet back after an outage)."""
    delivery = outbox.deliver()
    return [delivery.acknowledged, delivery.retried]


@shared_task(name="wallets.recover_stakes", **RETRY)
def recover_stakes():
    """Beat: roll back the stake debits a crash left (``outbox.recover_stakes``), then deliver them."""
    players = outbox.recover_stakes()
    delivery = outbox.deliver(players) if players else outbox.Delivery()
    return [delivery.acknowledged, delivery.retried]
