"""Operators acknowledge alerts. An acknowledged alert leaves the open list; a job that keeps one
open alert per subject (``settlement.rtp_watch``) opens a new one on the next deviation."""

from django.db import transaction
from django.utils import timezone

from accounts.models import Player

from . import audit
from .locks import lock_open_alerts
from .models import Alert, OperatorAction


@transaction.atomic
def acknowledge_alerts(*, alert_ids, reason, actor):
    """Mark the still-open alerts among ``alert_ids`` (primary keys) acknowledged by ``actor`` (an
    operator user) now, each with an audit row giving ``reason`` (required: ``ReasonRequired``).
    Alerts already acknowledged are left as they are (a double submit changes nothing). Returns the
    alerts acknowledged by this call."""
    reason = audit.require_reason(reason)
    _, user = audit.actor_fields(actor)
    alerts = lock_open_alerts(alert_ids)
    operators = dict(Player.objects.filter(pk__in={a.player_id for a in alerts if a.player_id})
                     .values_list("pk", "operator_id"))
    now = timezone.now()
    for alert in alerts:
        alert.acknowledged_at, alert.acknowledged_by = now, user
        audit.record(actor=actor, action=OperatorAction.Action.ACKNOWLEDGE_ALERT, target=alert, reason=reason,
                     operator_id=operators.get(alert.player_id), kind=alert.kind)
    Alert.objects.bulk_update(alerts, ["acknowledged_at", "acknowledged_by"])
    return alerts
