"""``python manage.py rtp --table CODE [--json]``: the exact theoretical RTP of a configured table,
with its own pay tables (cached in ``TheoreticalRtp``; computed when missing), printed like
``python -m tables.engine rtp --variant V``."""

import json as _json

from django.core.management.base import BaseCommand, CommandError

from tables import rtp
from tables.engine.rtp.cli import format_report
from tables.models import Table


class Command(BaseCommand):
    help = "Exact RTP of a table's main game and side bets under its pay tables in force."

    def add_arguments(self, parser):
        parser.add_argument("--table", required=True, help="table code (in any case), e.g. CL-1")
        parser.add_argument("--json", action="store_true", help="print the full report as JSON")

    def handle(self, *args, table, json: bool = False, **options):
        try:
            found = Table.objects.get(code__iexact=table)
            rep = rtp.table_report(found, compute=True)
        except Table.DoesNotExist:
            raise CommandError(f"no table {table!r}") from None
        except ValueError as e:
            raise CommandError(f"table {table}: invalid pay tables: {e}") from None
        if json:
            self.stdout.write(_json.dumps(rep, indent=2, sort_keys=True))
        else:
            self.stdout.write(f"table {found.code} ({found.name}), pay tables in force")
            self.stdout.write(format_report(rep))
