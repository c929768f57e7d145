"""Reads of the ledger that pages and APIs share."""

from django.db.models import Sum

from .models import Account, LedgerEntry


def account_balance(account):
    """The balance of any account as a ``Decimal``: the column for wallets, the sum of entries for
    house and cashier accounts (which keep no balance column)."""
    if account.is_wallet:
        return account.balance
    return LedgerEntry.objects.filter(account=account).aggregate(total=Sum("amount"))["total"] or 0


def wallets_of(player):
    """The player's wallets with their currencies, ordered by currency code."""
    return Account.objects.filter(kind=Account.Kind.WALLET, player=player).select_related("currency").order_by("currency_id")
