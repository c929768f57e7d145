"""Celery tasks of settlement: each takes ids, calls one service, and is safe to run twice or at
once (the services lock the round and check its state; ledger keys are unique).

Workers run with ``acks_late`` and ``task_reject_on_worker_lost`` (config/settings.py): a task
whose worker dies is delivered again, and the beat's re-drive catches any task that is lost. The
only retries are on ``OperationalError`` (lock timeout, deadlock, lost connection), at most
``SETTLEMENT_TASK_MAX_RETRIES`` times, with backoff capped below ``CELERY_MAX_COUNTDOWN``. An
invalid record is not an exception here: the round goes to SETTLEMENT_FAILED and stays there.

Beat jobs (rows created by migration ``0002_beat_schedule``, editable in the admin; run exactly ONE
beat): ``redrive_unsettled`` every minute, ``void_overdue`` every minute, ``reconcile_ledger`` hourly;
``rtp_watch`` every 10 minutes (migration ``0003_rtp_watch``), ``watch_wallets`` every minute
(migration ``0008_watch_wallets``), ``seal_unsealed`` every minute (migration ``0015_round_seals``).
``seal_round`` (a round's seal, queued when it reaches a final step) is ``settlement.seals``'s.
"""

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from . import jobs, seals, services, voids
from . import rtp_watch as rtp_watch_service
from .seals import seal_round

__all__ = ["seal_round"]  # registered with the worker from here, its tasks module

RETRY = {"autoretry_for": (OperationalError,), "max_retries": settings.SETTLEMENT_TASK_MAX_RETRIES,
         "retry_backoff": 2, "retry_backoff_max": min(60, settings.CELERY_MAX_COUNTDOWN), "retry_jitter": True}


@shared_task(name="settlement.settle_round", **RETRY)
def settle_round(round_id):
    """Settle round ``round_id`` (``services.settle_round``); queued by
    ``settlement.results.record_result`` on commit."""
    services.settle_round(round_id=round_id)


@shared_task(name="settlement.redrive_unsettled")
def redrive_unsettled():
    """Beat: queue ``settle_round`` again for every round RESULTED longer than
    ``SETTLEMENT_REDRIVE_AFTER_SECONDS`` (its task was lost), and alert operators of those RESULTED
    longer than ``SETTLEMENT_STUCK_AFTER_SECONDS`` (``jobs.alert_stuck_rounds``). Returns the
    number queued."""
    jobs.alert_stuck_rounds()
    ids = jobs.unsettled_round_ids()
    for round_id in ids:
        settle_round.delay(round_id)
    return len(ids)


@shared_task(name="settlement.void_overdue", **RETRY)
def void_overdue():
    """Beat: void the rounds SUSPENDED longer than their table's limit (``voids.void_overdue_rounds``)."""
    return len(voids.void_overdue_rounds())


@shared_task(name="settlement.reconcile_ledger", **RETRY)
def reconcile_ledger():
    """Beat: check the ledger; a breach becomes an ``Alert`` (``jobs.reconcile_ledger``)."""
    return jobs.reconcile_ledger().ok


@shared_task(name="settlement.watch_wallets", **RETRY)
def watch_wallets():
    """Beat: raise and clear the Alerts of seamless movements an operator's wallet keeps failing
    (``jobs.watch_wallets``); returns ``[raised, cleared]``."""
    return list(jobs.watch_wallets())


@shared_task(name="settlement.rtp_watch", **RETRY)
def rtp_watch():
    """Beat: observed vs theoretical RTP of every table (``rtp_watch.watch``); returns the number of
    ``rtp_deviation`` alerts opened or updated."""
    return len(rtp_watch_service.watch())


@shared_task(name="settlement.seal_unsealed", **RETRY)
def seal_unsealed():
    """Beat: seal the recent rounds whose seal task was lost (``seals.seal_unsealed``); returns how many."""
    return len(seals.seal_unsealed())
