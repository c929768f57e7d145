"""``python manage.py reconcile``: check every ledger invariant and the seamless wallets'; exit 1 on any breach."""

from django.core.management.base import BaseCommand, CommandError

from wallets.reconcile import reconcile


class Command(BaseCommand):
    help = "Check the ledger's invariants, print a summary, exit non-zero on any breach."

    def handle(self, *args, **options):
        report = reconcile()
        self.stdout.write(f"transactions: {report.transactions}  entries: {report.entries}  wallets: {report.wallets}")
        for (operator, currency), by_kind in sorted(report.by_operator.items()):
            parts = "  ".join(f"{kind} {total:,.2f}" for kind, total in sorted(by_kind.items()))
            self.stdout.write(f"{operator} {currency}: {parts}")
        for line in report.flagged:
            self.stdout.write(self.style.WARNING(f"flagged: {line}"))
        if report.flagged_count > len(report.flagged):
            self.stdout.write(self.style.WARNING(f"flagged: {report.flagged_count} wallets in all, "
                                                 f"{len(report.flagged)} listed"))
        if not report.ok:
            for line in report.breaches:
                self.stderr.write(self.style.ERROR(f"BREACH: {line}"))
            raise CommandError(f"{len(report.breaches)} breach(es) found")
        self.stdout.write(self.style.SUCCESS("reconcile: clean"))
