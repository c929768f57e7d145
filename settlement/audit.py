"""The operator audit trail (docs/architecture.md: operator actions write who, when, what, why).

Every operator action service (void, resettle, dispute decision, manual adjustment) calls
``require_reason`` first and ``record`` in its own transaction. The admin's sign-ins, failed
sign-ins (``record_sign_in``, from the auth signals), CSV exports and pay-table edits are audited
too."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.urls import reverse

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
#: The one answer to a reason holding a NUL, wherever it is typed (the admin's forms, the player API).
NUL_REFUSED = "a reason cannot contain NUL characters"


def require_reason(reason):
    """``reason`` stripped; raises ``ReasonRequired`` if it is blank or not a string, holds a NUL
    character (PostgreSQL text cannot store one) or is longer than ``MAX_REASON`` characters."""
    text = reason.strip() if isinstance(reason, str) else ""
    if not text:
        raise ReasonRequired("a reason is required")
    if "\x00" in text:
        raise ReasonRequired(NUL_REFUSED)
    if len(text) > MAX_REASON:
        raise ReasonRequired(f"a reason is at most {MAX_REASON:,} characters")
    return text


def record(*, actor, action, target, reason, actor_user=None, operator_id=None, **payload):
    """Write and return an ``OperatorAction``: ``actor`` as in ``actor_fields``, ``action`` an
    ``OperatorAction.Action``, ``target`` the model instance acted on (or ``(model label, pk)``),
    ``reason`` (non-blank),
    ``operator_id`` the operator whose object ``target`` is (None: the provider's, e.g. a round),
    ``payload`` JSON-able keyword values (money as decimal strings)."""
    label, user = actor_fields(actor, actor_user)
    model, pk = (target._meta.label_lower, target.pk) if hasattr(target, "_meta") else target
    return OperatorAction.objects.create(actor=user, actor_label=label, action=action,
                                         target_model=model, target_pk=str(pk),
                                         operator_id=operator_id, reason=require_reason(reason), payload=payload)


def staff_operator_id(user):
    """The id of the operator whose staff ``user`` is (``OperatorStaff``); None for the provider's."""
    staff = getattr(user, "operator_staff", None) if user is not None else None
    return staff.operator_id if staff is not None else None


def record_sign_in(*, request, user=None, username=""):
    """Audit a sign-in to the admin through its login page: ``user`` signed in, or (None) a
    failed attempt for ``username`` (a wrong password, a locked-out pair, an unknown name). Other
    logins (a test's ``force_login``) are not the admin's and are not recorded."""
    if request is None or request.path != reverse("admin:login"):
        return None
    address = request.META.get("REMOTE_ADDR", "")
    if user is not None:
        return record(actor=user, action=OperatorAction.Action.LOGIN, target=user, operator_id=staff_operator_id(user),
                      reason="signed in to the admin", address=address)
    known = get_user_model().objects.filter(username=username).first() if username else None
    return record(actor=f"login:{username}"[:100] or "login:", action=OperatorAction.Action.LOGIN_FAILED,
                  target=known or ("auth.user", "?"), operator_id=staff_operator_id(known),
                  reason="failed sign-in to the admin (wrong password, locked out or unknown user)",
                  username=username[:150], address=address, locked_out=getattr(request, "axes_locked_out", False))
