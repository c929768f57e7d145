"""The beat jobs' services: find rounds whose settle task was lost, alert on rounds stuck
unsettled, check the ledger hourly, and alert on seamless movements an operator's wallet keeps
failing (``settlement.tasks`` runs them)."""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from tables.models import Round
from wallets.models import WalletMovement
from wallets.reconcile import reconcile

from .models import Alert

State = Round.State


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
    into SETTLEMENT_FAILED (it is retried each minute; the alert makes operators see it). Returns
    the ids of the rounds alerted."""
    stuck = unsettled_round_ids(older_than=settings.SETTLEMENT_STUCK_AFTER_SECONDS, now=now)
    known = set(Alert.objects.filter(kind=Alert.Kind.SETTLEMENT_STUCK, round_id__in=stuck)
                .values_list("round_id", flat=True))
    rounds = list(Round.objects.filter(pk__in=set(stuck) - known).select_related("table").order_by("pk"))
    Alert.objects.bulk_create([
        Alert(kind=Alert.Kind.SETTLEMENT_STUCK, severity=Alert.Severity.CRITICAL, table=r.table, round=r,
              message=f"round {r.title} resulted at {r.resulted_at:%Y-%m-%d %H:%M:%S} UTC and is still "
                      "not settled: its settle task keeps failing (see the workers' log)",
              payload={"round": r.pk, "resulted_at": r.resulted_at.isoformat()})
        for r in rounds])
    return [r.pk for r in rounds]


def reconcile_ledger():
    """Run ``wallets.reconcile.reconcile`` and record any breach as a critical ``Alert``
    (``reconcile_breach``). Returns the ``ReconcileReport``."""
    report = reconcile()
    if not report.ok:
        Alert.objects.create(
            kind=Alert.Kind.RECONCILE_BREACH, severity=Alert.Severity.CRITICAL,
            message=f"ledger reconcile found {len(report.breaches)} breach(es): {report.breaches[0]}",
            payload={"breaches": report.breaches, "flagged": report.flagged,
                     "totals": {c: {k: str(v) for k, v in t.items()} for c, t in report.totals.items()}})
    return report


def watch_wallets(*, now=None):
    """One critical ``wallet_failing`` ``Alert`` per seamless movement failing for longer than
    ``WALLET_ALERT_AFTER_SECONDS`` (still retried) or refused for good (FAILED: a correction the
    player cannot cover, a duplicate transaction id), once per movement; and each such alert of a
    movement since acknowledged by the operator's wallet is cleared (acknowledged, by the system).
    Returns ``(raised, cleared)`` counts."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.WALLET_ALERT_AFTER_SECONDS)
    open_alerts = Alert.objects.filter(kind=Alert.Kind.WALLET_FAILING, acknowledged_at__isnull=True)
    alerted = {a.payload.get("movement"): a for a in open_alerts}
    failing = (WalletMovement.objects.filter(state=WalletMovement.State.FAILED)
               | WalletMovement.objects.filter(state=WalletMovement.State.PENDING, failing_since__lte=cutoff))
    new = [m for m in failing.select_related("operator", "player").order_by("pk") if m.pk not in alerted]
    Alert.objects.bulk_create([
        Alert(kind=Alert.Kind.WALLET_FAILING, severity=Alert.Severity.CRITICAL, player=m.player,
              message=f"{m.operator.code}'s wallet: {m.call} {m.key} ({m.amount} {m.currency_id}, player "
                      f"{m.player.game_code}) {'refused' if m.state == m.State.FAILED else 'failing'} after "
                      f"{m.attempts} attempt(s): {m.status or m.last_error}",
              payload={"movement": m.pk, "key": m.key, "operator": m.operator.code, "state": m.state})
        for m in new])
    done = set(WalletMovement.objects.filter(pk__in=list(alerted), state=WalletMovement.State.OK)
               .values_list("pk", flat=True))
    cleared = open_alerts.filter(pk__in=[a.pk for pk, a in alerted.items() if pk in done]).update(acknowledged_at=now)
    return len(new), cleared


def beat_job_failed(*, job, task, error):
    """Beat could not queue ``job`` (its schedule entry's name; ``task`` the task's name) because of
    ``error`` (the broker down): one open critical ``beat_job_failing`` Alert per job, counting the
    failed ticks and keeping the last error. Returns the Alert."""
    alert = (Alert.objects.filter(kind=Alert.Kind.BEAT_JOB_FAILING, acknowledged_at__isnull=True,
                                  payload__job=job).order_by("pk").first())
    if alert is None:
        return Alert.objects.create(kind=Alert.Kind.BEAT_JOB_FAILING, severity=Alert.Severity.CRITICAL,
                                    message=f"beat could not queue {job} ({task}): {error}",
                                    payload={"job": job, "task": task, "failures": 1})
    alert.payload = {**alert.payload, "failures": alert.payload.get("failures", 1) + 1}
    alert.message = f"beat could not queue {job} ({task}) {alert.payload['failures']} times, last: {error}"
    alert.save(update_fields=["payload", "message"])
    return alert


def beat_job_queued(*, job, now=None):
    """Beat queued ``job`` again: its open ``beat_job_failing`` Alert is cleared (acknowledged, by
    the system). Returns the number cleared."""
    return (Alert.objects.filter(kind=Alert.Kind.BEAT_JOB_FAILING, acknowledged_at__isnull=True, payload__job=job)
            .update(acknowledged_at=now or timezone.now()))


def task_lost(*, task, task_id, args, error):
    """A worker process died under task ``task_id`` (``task`` its name, ``args`` its arguments: the
    round) and the message went back to the queue: one critical ``task_lost`` Alert, which the
    operator acknowledges once the cause (a crash, the OOM killer) is known. Returns the Alert."""
    round_id = args[0] if task == "settlement.settle_round" and args and isinstance(args[0], int) else None
    return Alert.objects.create(
        kind=Alert.Kind.TASK_LOST, severity=Alert.Severity.CRITICAL,
        round=Round.objects.filter(pk=round_id).first() if round_id else None,
        message=f"a worker process died under {task}[{task_id}] args={args!r} ({error}); the task was requeued",
        payload={"task": task, "id": task_id, "args": repr(args)[:500]})
