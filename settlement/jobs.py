"""The beat jobs' services: find rounds whose settle task was lost, alert on rounds stuck
unsettled, and check the ledger hourly (``settlement.tasks`` runs them)."""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from accounts.reconcile import reconcile
from tables.models import Round

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
