"""A Supervisor sends a seamless wallet movement that keeps failing again now, audited (the
operator's wallet applies a transaction id once, however many times it is sent)."""

from django.db import transaction

from wallets.port import retry

from . import audit
from .models import OperatorAction


@transaction.atomic
def retry_movement(*, movement_id, reason, actor):
    """Send the seamless movement ``movement_id`` again now (``wallets.port.retry``: a FAILED
    credit, rollback or correction is PENDING again, a failing one waiting for its backoff is due;
    delivered once this commits), with an ``OperatorAction`` giving ``actor`` (an operator user)
    and ``reason`` (required). Returns the movement. Raises ``ReasonRequired`` and
    ``wallets.exceptions.NotRetryable``; nothing is written then."""
    reason = audit.require_reason(reason)
    movement, was = retry(movement_id)
    audit.record(actor=actor, action=OperatorAction.Action.RETRY_MOVEMENT, target=movement, reason=reason,
                 operator_id=movement.operator_id, key=movement.key, call=movement.call, kind=movement.kind,
                 amount=str(movement.amount), currency=movement.currency_id, state=was, attempts=movement.attempts)
    return movement
