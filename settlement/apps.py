from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in, user_login_failed


def _signed_in(sender, request, user, **kwargs):
    from .audit import record_sign_in

    record_sign_in(request=request, user=user)


def _sign_in_failed(sender, credentials, request=None, **kwargs):
    from .audit import record_sign_in

    record_sign_in(request=request, username=str(credentials.get("username", "")))


class SettlementConfig(AppConfig):
    """Settlement: settle / void / resettle rounds, Celery tasks and beat, disputes, operator audit
    (the admin's sign-ins and failed sign-ins included: the auth signals)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "settlement"

    def ready(self):
        user_logged_in.connect(_signed_in, dispatch_uid="settlement.audit.signed_in")
        user_login_failed.connect(_sign_in_failed, dispatch_uid="settlement.audit.sign_in_failed")
