"""``manage.py create_roles``: create or complete the operator roles (also done by ``migrate``)."""

from django.core.management.base import BaseCommand

from adminkit.roles import ensure_roles


class Command(BaseCommand):
    help = "Create the Viewer, Dispute officer and Supervisor groups with their permissions."

    def handle(self, *args, **options):
        for name, group in ensure_roles().items():
            self.stdout.write(f"{name}: {group.permissions.count()} permissions")
