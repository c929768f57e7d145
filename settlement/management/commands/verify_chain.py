"""``python manage.py verify_chain``: prove the hash chains intact (the ledger's, per wallet:
``accounts.chain``; the round records', per table: ``settlement.seals``) or name the first broken
row of each; exit 1 when one is broken."""

from django.core.management.base import BaseCommand, CommandError

from accounts import chain
from settlement import seals

#: Rounds waiting for their seal listed by id (the others are counted).
LISTED = 20


class Command(BaseCommand):
    help = ("Recompute the ledger's and the round records' hash chains from the rows; print each intact or "
            "its first broken row; exit non-zero on any break.")

    def add_arguments(self, parser):
        parser.add_argument("--chain", choices=["ledger", "records", "all"], default="all",
                            help="the chains to verify (default: all)")

    def handle(self, *args, **options):
        which = options["chain"]
        broken = []
        if which in ("ledger", "all"):
            ledger = chain.verify()
            self._line("ledger", f"{ledger.links:,} transactions in {ledger.chains:,} chains", ledger.broken,
                       broken)
        if which in ("records", "all"):
            records = seals.verify()
            self._line("round records", f"{records.links:,} seals in {records.chains:,} chains", records.broken,
                       broken)
            if records.unsealed and records.broken is None:
                shown = ", ".join(str(pk) for pk in records.unsealed[:LISTED])
                more = f" and {len(records.unsealed) - LISTED:,} more" if len(records.unsealed) > LISTED else ""
                self.stdout.write(self.style.WARNING(
                    f"round records: {len(records.unsealed):,} rounds waiting for their seal (not a break: "
                    f"sealed by the beat, or settled before the chains existed): {shown}{more}"))
        if broken:
            raise CommandError(f"{len(broken)} chain(s) broken: " + "; ".join(broken))

    def _line(self, name, counted, found, broken):
        if found is None:
            self.stdout.write(self.style.SUCCESS(f"{name}: {counted}: intact"))
            return
        self.stderr.write(self.style.ERROR(f"{name}: BROKEN at {found} (checked {counted} up to it)"))
        broken.append(f"{name} at {found}")
