"""Row locks of settlement's rows, in the platform's one lock order (docs/architecture.md, "Locks"):
a dispute or alerts (6th), after a player (``accounts.locks.lock_player``) and before any wallet."""

from .models import Alert, Dispute


def lock_dispute(dispute):
    """Dispute ``dispute`` (a ``Dispute`` or its pk) read again under ``FOR UPDATE``; raises
    ``Dispute.DoesNotExist``."""
    return Dispute.objects.select_for_update().get(pk=dispute.pk if isinstance(dispute, Dispute) else dispute)


def lock_open_alerts(alert_ids):
    """The alerts among ``alert_ids`` (primary keys) not yet acknowledged, under ``FOR UPDATE`` in
    primary-key order; a list of ``Alert``."""
    return list(Alert.objects.select_for_update().filter(pk__in=alert_ids, acknowledged_at__isnull=True)
                .order_by("pk"))
