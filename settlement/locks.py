"""Row locks of settlement's rows, in the platform's one lock order (docs/architecture.md, "Locks"):
a dispute (6th), after its player (``accounts.locks.lock_player``) and before any wallet."""

from .models import Dispute


def lock_dispute(dispute):
    """Dispute ``dispute`` (a ``Dispute`` or its pk) read again under ``FOR UPDATE``; raises
    ``Dispute.DoesNotExist``."""
    return Dispute.objects.select_for_update().get(pk=dispute.pk if isinstance(dispute, Dispute) else dispute)
