"""``python manage.py export_records --from 2026-11-01 --to 2026-11-30 [--operator CODE] [--out DIR]``:
a date range of game records for a regulator (``settlement.regulator.export``): rounds, bets and
ledger movements as JSON Lines, with a manifest of counts and hashes."""

from datetime import date

from django.core.management.base import BaseCommand, CommandError

from accounts.models import Operator
from settlement.regulator import export


def _date(value):
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise CommandError(f"{value!r} is not a date (YYYY-MM-DD)") from exc


class Command(BaseCommand):
    help = ("Write the rounds opened in a date range (UTC, both days inclusive), their bets and the ledger "
            "movements of the range as JSON Lines with a manifest (counts, SHA-256).")

    def add_arguments(self, parser):
        parser.add_argument("--from", dest="date_from", required=True, help="first day, YYYY-MM-DD")
        parser.add_argument("--to", dest="date_to", required=True, help="last day, YYYY-MM-DD")
        parser.add_argument("--operator", help="an operator's code (in any case): its players' records only")
        parser.add_argument("--out", default="records", help="the directory to write (default: ./records)")

    def handle(self, *args, date_from, date_to, operator=None, out="records", **options):
        start, end = _date(date_from), _date(date_to)
        if end < start:
            raise CommandError(f"--to {end} is before --from {start}")
        found = None
        if operator:
            found = Operator.objects.filter(code__iexact=operator).first()
            if found is None:
                raise CommandError(f"no operator {operator!r}")
        manifest = export(directory=out, date_from=start, date_to=end, operator=found)
        counts = ", ".join(f"{name}: {f['lines']:,}" for name, f in manifest["files"].items())
        self.stdout.write(self.style.SUCCESS(f"{out}: {counts}; manifest.json"))
