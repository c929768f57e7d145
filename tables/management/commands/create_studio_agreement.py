"""``python manage.py create_studio_agreement STUDIO OPERATOR``: the operator's players may bet at the
studio's tables (``tables.studios.agree``; the admin's studio agreements page does the same)."""

from django.core.management.base import BaseCommand, CommandError

from accounts.models import Operator
from tables.models import Studio
from tables.studios import agree


class Command(BaseCommand):
    help = ("Make the agreement of an operator with a studio (kept if it exists): the studio's game server may then "
            "bet for the operator's players in session. The admin's studio agreements page lists and ends them.")

    def add_arguments(self, parser):
        parser.add_argument("studio", help="the studio's code")
        parser.add_argument("operator", help="the operator's code (in any case)")

    def handle(self, *args, **o):
        operator = Operator.objects.filter(code__iexact=o["operator"]).first()
        if operator is None:
            raise CommandError(f"no operator {o['operator']!r}")
        try:
            agreement = agree(studio=o["studio"], operator=operator)
        except Studio.DoesNotExist:
            raise CommandError(f"no studio {o['studio']!r}") from None
        self.stdout.write(f"operator {operator.code}'s players may bet at studio {agreement.studio.code}'s tables")
