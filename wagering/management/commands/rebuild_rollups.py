"""``python manage.py rebuild_rollups --from YYYY-MM-DD --to YYYY-MM-DD [--operator CODE] [--check]``:
recompute the rollups of those days from the bets and the ledger (``wagering.rollups.rebuild``),
say for each operator's day whether it equals what was kept, and rewrite the days that differ
(``--check``: write nothing, exit 1 when a day differs)."""

import sys
from datetime import date

from django.core.management.base import BaseCommand, CommandError

from accounts.models import Operator
from wagering.rollups import rebuild


def _date(raw, name):
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise CommandError(f"--{name}: {raw!r} is not a date (YYYY-MM-DD)") from None


class Command(BaseCommand):
    help = ("Recompute the rollups (reports) of a range of days, in each operator's zone, from the bets and the "
            "ledger; say whether each day equals what was kept, and rewrite those that differ.")

    def add_arguments(self, parser):
        parser.add_argument("--from", dest="day_from", required=True, help="first day, YYYY-MM-DD")
        parser.add_argument("--to", dest="day_to", required=True, help="last day, YYYY-MM-DD (inclusive)")
        parser.add_argument("--operator", default="", help="one operator's code (default: every operator)")
        parser.add_argument("--check", action="store_true", help="compare only: write nothing, exit 1 on a difference")

    def handle(self, *args, day_from, day_to, operator, check, **options):
        first, last = _date(day_from, "from"), _date(day_to, "to")
        if last < first:
            raise CommandError(f"--to {last} is before --from {first}: the last day comes after the first")
        operators = Operator.objects.order_by("code")
        if operator:
            operators = operators.filter(code=operator)
            if not operators:
                raise CommandError(f"no operator {operator!r}")
        checks = rebuild(day_from=first, day_to=last, operators=list(operators), write=not check)
        differed = [c for c in checks if c.differences]
        for c in differed:
            self.stdout.write(f"{c.day} {c.operator}: differs ({'not written: --check' if check else 'rewritten'})")
            for line in c.differences:
                self.stdout.write(f"  {line}")
        if not differed:
            self.stdout.write(f"{len(checks)} operator-day(s) checked, all equal")
            return
        self.stdout.write(f"{len(checks)} operator-day(s) checked, {len(differed)} differed"
                          f"{' (nothing written)' if check else ' and were rewritten'}")
        if check:
            sys.exit(1)
