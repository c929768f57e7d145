"""Ledger reconciliation: every invariant of the double-entry ledger checked in SQL aggregates.

Used by ``python manage.py reconcile`` and by the hourly beat job (settlement), which turns a
breach into an alert operators see."""

from dataclasses import dataclass, field
from decimal import Decimal

from django.db.models import Count, F, Q, Sum
from django.db.models.functions import Coalesce, Round

from .models import MONEY, Account, LedgerEntry, LedgerTransaction


@dataclass
class ReconcileReport:
    """What ``reconcile`` found. ``breaches`` is a list of sentences; empty means clean.
    ``flagged`` lists wallets that went negative through a reversal (by design, for operators)."""

    transactions: int = 0
    entries: int = 0
    wallets: int = 0
    totals: dict = field(default_factory=dict)  # currency -> {"wallet": Decimal, "house": ..., "cashier": ...}
    by_operator: dict = field(default_factory=dict)  # (operator code, currency) -> the same, per operator
    breaches: list = field(default_factory=list)
    flagged: list = field(default_factory=list)
    flagged_count: int = 0  # all of them; ``flagged`` lists the first ``limit``

    @property
    def ok(self):
        return not self.breaches


def reconcile(limit=20):
    """Check the ledger: each transaction balanced, in one currency, with two or more entries; each
    wallet's balance equal to the sum of its entries; no negative wallet that is not flagged; each
    operator's accounts of a currency summing to zero (its players + its house + its cashier: no
    money crosses operators). Returns a ``ReconcileReport`` (at most ``limit`` examples per kind of
    breach; ``totals`` per currency over all operators, ``by_operator`` per operator and
    currency). Reads only."""
    report = ReconcileReport(transactions=LedgerTransaction.objects.count(), entries=LedgerEntry.objects.count(),
                             wallets=Account.objects.filter(kind=Account.Kind.WALLET).count())
    unbalanced = (LedgerEntry.objects.values("transaction_id")
                  .annotate(total=Sum("amount"), n=Count("id"))
                  .filter(~Q(total=0) | Q(n__lt=2)).order_by("transaction_id")[:limit])
    for row in unbalanced:
        report.breaches.append(f"transaction {row['transaction_id']} is unbalanced: "
                               f"{row['n']} entries summing to {row['total']}")
    empty = LedgerTransaction.objects.filter(entries__isnull=True).values_list("key", flat=True)[:limit]
    report.breaches += [f"transaction {key} has no entries" for key in empty]
    mixed = (LedgerEntry.objects.exclude(account__currency_id=F("transaction__currency_id"))
             .values_list("transaction__key", flat=True).distinct()[:limit])
    report.breaches += [f"transaction {key} mixes currencies" for key in mixed]
    crossing = (LedgerTransaction.objects.annotate(operators=Count("entries__account__operator", distinct=True))
                .filter(operators__gt=1).values_list("key", flat=True)[:limit])
    report.breaches += [f"transaction {key} moves money between operators" for key in crossing]
    # Sums rounded to the money columns' decimals: exact on PostgreSQL; on SQLite, which adds
    # decimals as binary floats, the rounding gives back the exact amount.
    drifted = (Account.objects.filter(kind=Account.Kind.WALLET)
               .annotate(total=Coalesce(Round(Sum("entries__amount"), MONEY["decimal_places"]), Decimal(0)))
               .exclude(balance=F("total"))
               .values_list("pk", "balance", "total")[:limit])
    for pk, balance, total in drifted:
        report.breaches.append(f"wallet {pk} balance {balance} differs from its entries {total}")
    negative = Account.objects.filter(kind=Account.Kind.WALLET, journal=False, balance__lt=0)
    report.flagged_count = negative.filter(negative_flagged=True).count()
    for account in negative.select_related("player").order_by("pk")[:limit]:
        line = f"wallet {account.pk} ({account}) is negative: {account.balance}"
        (report.flagged if account.negative_flagged else report.breaches).append(line)
    sums = (LedgerEntry.objects.values("account__operator__code", "account__currency_id", "account__kind")
            .annotate(total=Round(Sum("amount"), MONEY["decimal_places"]))
            .order_by("account__operator__code", "account__currency_id", "account__kind"))
    for row in sums:
        operator, currency, kind = row["account__operator__code"], row["account__currency_id"], row["account__kind"]
        report.by_operator.setdefault((operator, currency), {})[kind] = row["total"]
        by_kind = report.totals.setdefault(currency, {})
        by_kind[kind] = by_kind.get(kind, 0) + row["total"]
    for (operator, currency), by_kind in report.by_operator.items():
        if sum(by_kind.values()) != 0:
            report.breaches.append(f"{operator} {currency}: accounts sum to {sum(by_kind.values())}, not zero")
    return report
