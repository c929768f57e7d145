"""The operator site's toolkit as an app: its template filters, and the operator roles created after
every ``migrate``."""

from django.apps import AppConfig, apps
from django.db.models.signals import post_migrate


def _create_roles(sender, using="default", **kwargs):
    from .roles import ensure_roles

    ensure_roles(using=using)


class AdminkitConfig(AppConfig):
    """Creates the operator roles after every ``migrate`` (so ``make run`` ends up with them).
    Django sends ``post_migrate`` only for apps with models, which this one has not: the roles
    follow the signal of ``settlement``, the last app whose models they give permissions on."""

    name = "adminkit"
    verbose_name = "Operator site"

    def ready(self):
        post_migrate.connect(_create_roles, sender=apps.get_app_config("settlement"),
                             dispatch_uid="adminkit.create_roles")
