"""The operator audit trail (docs/architecture.md: operator actions write who, when, what, why).

Every operator action service (void, resettle, dispute decision, manual adjustment) calls
``require_reason`` first and ``record`` in its own transaction."""

from django.contrib.auth.models import AbstractBaseUser

from .exceptions import ReasonRequired
from .models import OperatorAction


def actor_fields(actor, actor_user=None):
    """``(label, user)`` for an ``actor`` that is a Django user (an operator: label
    ``operator:<username>``) or a string label (``system``, ``game-server:<user>``; blank means
    ``system``) with an optional ``actor_user``."""
    if isinstance(actor, AbstractBaseUser):
        return f"operator:{actor.get_username()}"[:100], actor
    return (actor or "system")[:100], actor_user


#: The longest reason or dispute note an operator may write (the player API's dispute reason: the same).
MAX_REASON = 4000


def require_reason(reason):
    """``reason`` stripped; raises ``ReasonRequired`` if it is blank or not a string, holds a NUL
    character (PostgreSQL text cannot store one) or is longer than ``MAX_REASON`` characters."""
    text = reason.strip() if isinstance(reason, str) else ""
    if not text:
        raise ReasonRequired("a reason is required")
    if "\x00" in text:
        raise ReasonRequired("a reason cannot contain NUL characters")
    if len(text) > MAX_REASON:
        raise ReasonRequired(f"a reason is at most {MAX_REASON:,} characters")
    return text


def record(*, actor, action, target, reason, actor_user=None, operator_id=None, **payload):
    """Write and return an ``OperatorAction``: ``actor`` as in ``actor_fields``, ``action`` an
    ``OperatorAction.Action``, ``target`` the model instance acted on, ``reason`` (non-blank),
    ``operator_id`` the operator whose object ``target`` is (None: the provider's, e.g. a round),
    ``payload`` JSON-able keyword values (money as decimal strings)."""
    label, user = actor_fields(actor, actor_user)
    return OperatorAction.objects.create(actor=user, actor_label=label, action=action,
                                         target_model=target._meta.label_lower, target_pk=str(target.pk),
                                         operator_id=operator_id, reason=require_reason(reason), payload=payload)
