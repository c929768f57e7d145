"""Waiting for the platform to settle the simulator's rounds, and the operator's correction of a
misread round once it is settled (``settlement.services.resettle_round`` with the record of the
cards really dealt)."""
from __future__ import annotations

import time

from django.db.models import Q

from settlement.services import resettle_round
from tables.models import Round

#: The operator who resettles misread rounds.
OPERATOR = "operator:simulator"


def pending(round_ids) -> int:
    """How many of ``round_ids`` are still waiting for settlement (RESULTED, or cancelled and not
    yet voided)."""
    return Round.objects.filter(pk__in=round_ids).filter(
        Q(state=Round.State.RESULTED) | Q(cancelled_at__isnull=False) & ~Q(state=Round.State.VOIDED)).count()


def wait_for_settlement(round_ids, timeout: float) -> bool:
    """Poll until none of ``round_ids`` is pending (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while pending(round_ids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.25)
    return True


def correct_misreads(misreads, timeout: float) -> list:
    """Resettle each misread round of ``misreads`` (``[(round id, correct record)]``) with its
    correct record once it is settled, waiting up to ``timeout`` seconds for its settlement (the
    correction is what the shoe's card counts then go by, ``tables.cards``). Returns the
    ``(round id, record)`` pairs not corrected (not settled in time)."""
    if not misreads or not wait_for_settlement([pk for pk, _ in misreads], timeout):
        return list(misreads)
    settled = set(Round.objects.filter(pk__in=[pk for pk, _ in misreads], state=Round.State.SETTLED)
                  .values_list("pk", flat=True))
    for pk, record in misreads:
        if pk in settled:
            resettle_round(round_id=pk, corrected_record=record, actor=OPERATOR,
                           reason="card misread by the scanner; rescanned, corrected record")
    return [(pk, record) for pk, record in misreads if pk not in settled]
