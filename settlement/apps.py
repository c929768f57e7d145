from django.apps import AppConfig


class SettlementConfig(AppConfig):
    """Settlement: settle / void / resettle rounds, Celery tasks and beat, disputes, operator audit."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "settlement"
