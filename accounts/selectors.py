"""Reads of the ledger that pages, APIs and the services above share: balances, a player's wallets
and entries, an operator's statement, the wallets of many players at once (a settlement's payouts,
a void's refunds)."""

from django.db import connection
from django.db.models import Sum

from . import pg
from .models import Account, LedgerEntry


def account_balance(account):
    """The balance of any account as a ``Decimal``: the column for wallets, the sum of entries for
    house and cashier accounts (which keep no balance column)."""
    if account.is_wallet:
        return account.balance
    return LedgerEntry.objects.filter(account=account).aggregate(total=Sum("amount"))["total"] or 0


def wallets_of(player):
    """The player's wallets with their currencies, ordered by currency code."""
    return (Account.objects.filter(kind=Account.Kind.WALLET, player=player)
            .select_related("currency").order_by("currency_id"))


def wallets_in(currency):
    """The wallets in ``currency`` (a ``Currency``), their currency loaded (a queryset)."""
    return Account.objects.filter(kind=Account.Kind.WALLET, currency=currency).select_related("currency")


def player_wallets(players, currency):
    """``{player_id: wallet Account}`` of ``players`` (a set of player ids) in ``currency`` (a
    ``Currency``), unlocked (``accounts.locks.lock_wallets`` locks them). On PostgreSQL one
    statement through the player index (``pg.wallets``; the fields a posting does not read are
    deferred)."""
    if connection.vendor == "postgresql":
        return {w.player_id: w for w in pg.wallets(currency, players)}
    found = {w.player_id: w for w in Account.objects.filter(kind=Account.Kind.WALLET, currency=currency,
                                                             player__in=players)}
    for wallet in found.values():
        wallet.currency = currency
    return found


#: The values of a ledger entry in the player's lists (``.values(*LEDGER_ROW)``): the entry, its
#: transaction's key, kind and time, its account's currency, minor units and whether it is a
#: journal (``Account.journal``).
LEDGER_ROW = ("id", "amount", "balance_after", "account__currency_id", "account__currency__minor_units",
              "account__journal", "transaction__key", "transaction__kind", "transaction__created_at")


def ledger_entries_for_player(player):
    """Every entry on ``player``'s wallets, newest first (by ``id``), with their transactions and
    currencies."""
    wallets = list(Account.objects.filter(kind=Account.Kind.WALLET, player=player).values_list("pk", flat=True))
    return (LedgerEntry.objects.filter(account_id__in=wallets)
            .select_related("transaction", "account__currency").order_by("-id"))


def statement_entries(operator):
    """Every entry on the wallets of ``operator``'s players, oldest first (by ``id``), with their
    transactions, currencies and players: the operator's statement."""
    return (LedgerEntry.objects.filter(account__kind=Account.Kind.WALLET, account__operator=operator)
            .select_related("transaction", "account__currency", "account__player").order_by("id"))


def wallet_balance(player, currency):
    """The balance of ``player``'s wallet in ``currency`` (a ``Currency``); 0 without a wallet."""
    return (Account.objects.filter(kind=Account.Kind.WALLET, player=player, currency=currency)
            .values_list("balance", flat=True).first() or 0)
