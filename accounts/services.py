"""The ledger's write side: every change of a balance goes through ``post`` (one or many postings,
in one database transaction, idempotent on each posting's key).

A *posting* moves a positive ``amount`` from ``source`` to ``destination`` (two ledger entries,
``-amount`` and ``+amount``, summing to zero) in one currency. Player wallets are locked with
``SELECT ... FOR UPDATE`` in primary-key order (no deadlocks), their balances updated in the same
transaction, and they never go below zero unless the caller allows it for a reversal, which flags
the wallet for operators. Money is ``Decimal`` in the currency's major units (``"12.35"`` EUR).
"""

from dataclasses import dataclass
from decimal import Decimal

from django.db import connection, transaction
from django.utils import timezone

from .exceptions import CurrencyMismatch, IdempotencyConflict, InsufficientFunds
from .models import Account, Currency, LedgerEntry, LedgerTransaction, Player
from .money import parse_amount
from .sql import execute_binary

Kind = LedgerTransaction.Kind


@dataclass(frozen=True)
class Posting:
    """One movement of money: ``amount`` (> 0, ``Decimal``/str/int, never float) leaves ``source`` and
    arrives in ``destination`` (``Account`` rows of the same currency), under the unique ``key``."""

    key: str
    kind: str
    source: Account
    destination: Account
    amount: Decimal
    memo: str = ""


def _validated(posting):
    src, dst = posting.source, posting.destination
    if src.currency_id != dst.currency_id:
        raise CurrencyMismatch(f"{posting.key}: {src.currency_id} account cannot pay a {dst.currency_id} account")
    if src.pk == dst.pk:
        raise IdempotencyConflict(f"{posting.key}: source and destination are the same account")
    minor_units = src.currency.minor_units
    amount = parse_amount(posting.amount, minor_units)
    return Posting(posting.key, posting.kind, src, dst, amount, posting.memo[:255])


def _same_movement(existing, posting):
    legs = {(e.account_id, e.amount) for e in existing.entries.all()}
    return (existing.kind == posting.kind
            and legs == {(posting.source.pk, -posting.amount), (posting.destination.pk, posting.amount)})


@transaction.atomic
def post(postings, *, allow_negative=False):
    """Write ``postings`` (a sequence of ``Posting``) as ledger transactions, all or nothing.

    A key already posted with the same movement returns the existing transaction and moves no
    money; with a different movement it raises ``IdempotencyConflict``. Returns the transactions in
    the order of ``postings``. Raises ``InvalidAmount``, ``CurrencyMismatch``, ``InsufficientFunds``
    (a wallet would go below zero; with ``allow_negative`` it may, and is flagged instead: reversals
    only, issue "void from SETTLED"), ``IdempotencyConflict`` (also for a key repeated within one call).
    """
    postings = [_validated(p) for p in postings]
    if len({p.key for p in postings}) != len(postings):
        raise IdempotencyConflict("the same key appears twice in one call")
    if not postings:
        return []
    wallet_ids = sorted({a.pk for p in postings for a in (p.source, p.destination) if a.is_wallet})
    # Lock first: a concurrent post of the same key waits here, then sees the committed row below.
    wallets = {pk: [balance, flagged] for pk, balance, flagged in Account.objects.select_for_update()
               .filter(pk__in=wallet_ids).order_by("pk").values_list("pk", "balance", "negative_flagged")}
    existing = {t.key: t for t in LedgerTransaction.objects.filter(key__in=[p.key for p in postings])
                .prefetch_related("entries")}
    now = timezone.now()
    result, txn_rows, entry_rows = {}, [], []
    for p in postings:
        if p.key in existing:
            if not _same_movement(existing[p.key], p):
                raise IdempotencyConflict(f"key {p.key!r} was already used for a different movement")
            result[p.key] = existing[p.key]
            continue
        result[p.key] = LedgerTransaction(key=p.key, kind=p.kind, currency_id=p.source.currency_id, memo=p.memo,
                                          created_at=now)
        txn_rows.append((p.key, p.kind, p.source.currency_id, p.memo, now))
        for account, amount in ((p.source, -p.amount), (p.destination, p.amount)):
            wallet = wallets.get(account.pk)
            balance_after = None
            if wallet is not None:
                wallet[0] += amount
                if wallet[0] < 0:
                    if not allow_negative:
                        raise InsufficientFunds(f"{p.key}: wallet {account.pk} holds "
                                                f"{wallet[0] - amount}, needs {-amount}")
                    wallet[1] = True
                balance_after = wallet[0]
            entry_rows.append((p.key, account.pk, amount, balance_after))
    if txn_rows:
        _write(txn_rows, entry_rows, wallets, result)
        for p in postings:  # keep the caller's instances in step with the database
            for account in (p.source, p.destination):
                if account.pk in wallets:
                    account.balance, account.negative_flagged = wallets[account.pk]
    return [result[p.key] for p in postings]


def _write(txn_rows, entry_rows, wallets, result):
    """Insert the new transactions (``txn_rows``: ``(key, kind, currency, memo, created_at)``) and
    their entries (``entry_rows``: ``(key, account pk, amount, balance_after)``), store the wallets'
    new balances (``wallets``: ``{pk: [balance, flagged]}``) and give ``result``'s new transactions
    their pks. Plain SQL: the ORM's per-row model instances cost more than the database work."""
    balances = [(pk, balance, flagged) for pk, (balance, flagged) in wallets.items()]
    if connection.vendor == "postgresql":
        ids = _write_postgresql(txn_rows, entry_rows, balances)
    else:
        with connection.cursor() as cursor:
            ids = _write_portable(cursor, txn_rows, entry_rows, balances)
    for key, pk in ids.items():
        result[key].pk = pk
        result[key]._state.adding = False


def _write_postgresql(txn_rows, entry_rows, balances):
    """``_write`` in ONE statement: the transactions inserted from arrays (``unnest``) returning
    their ids, the entries joined to them by key, the wallets updated; arrays sent in binary
    (``accounts.sql``). Returns ``{key: pk}``."""
    rows = execute_binary(
        f"""WITH txn AS (
                INSERT INTO {LedgerTransaction._meta.db_table} (key, kind, currency_id, memo, created_at)
                SELECT * FROM unnest(%b::varchar[], %b::varchar[], %b::varchar[], %b::varchar[], %b::timestamptz[])
                RETURNING key, id),
            entries AS (
                INSERT INTO {LedgerEntry._meta.db_table} (transaction_id, account_id, amount, balance_after)
                SELECT txn.id, e.account, e.amount, e.balance_after
                FROM unnest(%b::varchar[], %b::bigint[], %b::numeric[], %b::numeric[])
                     AS e(key, account, amount, balance_after) JOIN txn USING (key)),
            wallets AS (
                UPDATE {Account._meta.db_table} AS a SET balance = w.balance, negative_flagged = w.flagged
                FROM unnest(%b::bigint[], %b::numeric[], %b::boolean[]) AS w(id, balance, flagged)
                WHERE a.id = w.id)
            SELECT key, id FROM txn""",
        _columns(txn_rows, 5) + _columns(entry_rows, 4) + _columns(balances, 3))
    return dict(rows)


def _columns(rows, width):
    """``rows`` (tuples of ``width`` values) as ``width`` lists, one per column (arrays for ``unnest``)."""
    return [list(column) for column in zip(*rows)] or [[] for _ in range(width)]


def _write_portable(cursor, txn_rows, entry_rows, balances):
    """``_write`` with ``executemany`` (SQLite, the zero-setup default). Returns ``{key: pk}``."""
    cursor.executemany(f"INSERT INTO {LedgerTransaction._meta.db_table} (key, kind, currency_id, memo, created_at) "
                       "VALUES (%s, %s, %s, %s, %s)", txn_rows)
    keys = [row[0] for row in txn_rows]
    ids = {}
    for i in range(0, len(keys), 5000):
        ids.update(LedgerTransaction.objects.filter(key__in=keys[i:i + 5000]).values_list("key", "pk"))
    cursor.executemany(f"INSERT INTO {LedgerEntry._meta.db_table} (transaction_id, account_id, amount, balance_after) "
                       "VALUES (%s, %s, %s, %s)", [(ids[k], a, x, b) for k, a, x, b in entry_rows])
    cursor.executemany(f"UPDATE {Account._meta.db_table} SET balance = %s, negative_flagged = %s WHERE id = %s",
                       [(balance, flagged, pk) for pk, balance, flagged in balances])
    return ids


def post_one(**posting):
    """``post`` for a single ``Posting(**posting)``; returns its ``LedgerTransaction``."""
    allow_negative = posting.pop("allow_negative", False)
    return post([Posting(**posting)], allow_negative=allow_negative)[0]


# --- accounts -------------------------------------------------------------------------------------

def wallet_for(*, player, currency):
    """The player's wallet in ``currency`` (a ``Currency`` or its code), created empty if missing."""
    code = currency.pk if isinstance(currency, Currency) else currency
    wallet, _ = Account.objects.get_or_create(kind=Account.Kind.WALLET, player=player, currency_id=code)
    return wallet


def house_account(*, name, currency):
    """The house account ``name`` (``table:<code>``) in ``currency``, created if missing."""
    code = currency.pk if isinstance(currency, Currency) else currency
    account, _ = Account.objects.get_or_create(kind=Account.Kind.HOUSE, name=name, currency_id=code)
    return account


def cashier_account(*, currency):
    """The cashier account of ``currency``: the outside world for deposits and withdrawals."""
    code = currency.pk if isinstance(currency, Currency) else currency
    account, _ = Account.objects.get_or_create(kind=Account.Kind.CASHIER, name="cashier", currency_id=code)
    return account


def can_take_seat(player, currency):
    """RULES.md 9: trial accounts and play-for-fun currencies never occupy a seat.

    ``player``: a ``Player``; ``currency``: a ``Currency``. The one place this rule lives."""
    return player.account_kind == Player.Kind.REAL and not currency.play_for_fun


def create_player(*, user, code, account_kind=Player.Kind.REAL):
    """Create a ``Player`` for a Django ``user``."""
    return Player.objects.create(user=user, code=code, account_kind=account_kind)


# --- the movements --------------------------------------------------------------------------------

def deposit(*, wallet, amount, key, memo=""):
    """Credit ``amount`` to a player ``wallet`` from the cashier (operators, tests, demo set-up)."""
    return post_one(key=key, kind=Kind.DEPOSIT, source=cashier_account(currency=wallet.currency_id),
                    destination=wallet, amount=amount, memo=memo)


def withdraw(*, wallet, amount, key, memo=""):
    """Pay ``amount`` out of a player ``wallet`` to the cashier; ``InsufficientFunds`` if it can't."""
    return post_one(key=key, kind=Kind.WITHDRAWAL, source=wallet,
                    destination=cashier_account(currency=wallet.currency_id), amount=amount, memo=memo)


def post_stake(*, wallet, house, amount, key, memo=""):
    """Debit a stake (``stake:<bet>``, ``double:<bet>``…) from ``wallet`` to the table's ``house``."""
    return post_one(key=key, kind=Kind.STAKE, source=wallet, destination=house, amount=amount, memo=memo)


def post_return(*, wallet, house, amount, key, memo=""):
    """Credit a bet's return (stake back + winnings, ``payout:<bet>``) from ``house`` to ``wallet``."""
    return post_one(key=key, kind=Kind.PAYOUT, source=house, destination=wallet, amount=amount, memo=memo)


def refund(*, wallet, house, amount, key, memo=""):
    """Give a stake back in full (a void, RULES.md 10; ``refund:<bet>``) from ``house`` to ``wallet``."""
    return post_one(key=key, kind=Kind.REFUND, source=house, destination=wallet, amount=amount, memo=memo)


def post_adjustment(*, wallet, house, amount, key, memo=""):
    """A signed correction (``adjust:<dispute>``): ``amount`` > 0 credits the player from ``house``,
    < 0 debits the player (``InsufficientFunds`` if the wallet cannot cover it)."""
    value = parse_amount(amount, wallet.currency.minor_units, allow_negative=True)
    if value >= 0:
        return post_one(key=key, kind=Kind.ADJUSTMENT, source=house, destination=wallet, amount=value, memo=memo)
    return post_one(key=key, kind=Kind.ADJUSTMENT, source=wallet, destination=house, amount=-value, memo=memo)
