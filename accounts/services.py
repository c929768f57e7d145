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

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from .exceptions import CurrencyMismatch, IdempotencyConflict, InsufficientFunds
from .models import DEFAULT_OPERATOR, Account, LedgerEntry, LedgerTransaction, Operator, Player
from .money import parse_amount
from .sql import BY_KEY, array_sql, execute_binary

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
    if src.operator_id != dst.operator_id:
        raise CurrencyMismatch(f"{posting.key}: an account of one operator cannot pay another operator's")
    if src.pk == dst.pk:
        raise IdempotencyConflict(f"{posting.key}: source and destination are the same account")
    minor_units = src.currency.minor_units
    amount = parse_amount(posting.amount, minor_units)
    return Posting(posting.key, posting.kind, src, dst, amount, posting.memo[:255])


def _same_movement(existing, posting):
    legs = {(e.account_id, e.amount) for e in existing.entries.all()}
    return (existing.kind == posting.kind
            and legs == {(posting.source.pk, -posting.amount), (posting.destination.pk, posting.amount)})


#: ``LedgerTransaction``'s columns in model order: ``from_db`` builds a written transaction from them
#: (positional, cheaper than keyword ``__init__`` for the many transactions of a bulk post).
_TRANSACTION_FIELDS = ("id", "key", "kind", "currency_id", "memo", "created_at")


def _wallet_ids(postings):
    """The pks of the player wallets ``postings`` touch, in lock order (ascending)."""
    return sorted({a.pk for p in postings for a in (p.source, p.destination) if a.is_wallet})


def post(postings, *, allow_negative=False):
    """Write ``postings`` (a sequence of ``Posting``) as ledger transactions, all or nothing.

    A key already posted with the same movement returns the existing transaction and moves no
    money; with a different movement it raises ``IdempotencyConflict``. Returns the transactions in
    the order of ``postings``. Raises ``InvalidAmount``, ``CurrencyMismatch``, ``InsufficientFunds``
    (a debit would leave a wallet below zero; with ``allow_negative`` it may, and is flagged instead:
    reversals only, voiding or correcting a SETTLED round; a credit to a wallet a reversal left
    negative is always allowed: it owes less after), ``IdempotencyConflict`` (also for a key repeated within
    one call). A journal wallet (a seamless player's, ``Account.journal``) is never checked nor
    flagged: its operator decides funds.

    Runs in the caller's transaction, or in one of its own. On PostgreSQL the writing is ONE
    statement (``_post_postgresql``), so one posting outside a transaction is exactly one
    statement, committed on its own: a transaction with one round trip. Elsewhere (SQLite, the
    zero-setup default) it takes a few (``_post_portable``).
    """
    postings = [_validated(p) for p in postings]
    if len({p.key for p in postings}) != len(postings):
        raise IdempotencyConflict("the same key appears twice in one call")
    if not postings:
        return []
    if connection.vendor == "postgresql" and len(postings) == 1 and connection.get_autocommit():
        # One statement is all or nothing by itself; a key found taken wrote nothing, so the
        # comparison that follows it needs no transaction either.
        return _post(postings, allow_negative, _post_postgresql)
    with transaction.atomic():
        return _post(postings, allow_negative,
                     _post_postgresql if connection.vendor == "postgresql" else _post_portable)


def _post(postings, allow_negative, write):
    """``post`` once validated: ``write`` (``_post_postgresql`` or ``_post_portable``) writes the
    postings whose key is free; the others are compared with what their key holds."""
    now = timezone.now()
    ids, wallets = write(postings, allow_negative, now)
    # Keys already taken (before this call, or by a concurrent call this one waited for): compare.
    taken = [p.key for p in postings if p.key not in ids]
    existing = ({t.key: t for t in LedgerTransaction.objects.filter(key__in=taken).prefetch_related("entries")}
                if taken else {})
    result, alias = [], connection.alias  # the alias read once: each read goes through a thread-local
    for p in postings:
        if p.key in ids:
            txn = LedgerTransaction.from_db(alias, _TRANSACTION_FIELDS,
                                            (ids[p.key], p.key, p.kind, p.source.currency_id, p.memo, now))
        else:
            txn = existing[p.key]
            if not _same_movement(txn, p):
                raise IdempotencyConflict(f"key {p.key!r} was already used for a different movement")
        result.append(txn)
    for p in postings:  # keep the caller's instances in step with the database
        for account in (p.source, p.destination):
            if account.pk in wallets:
                account.balance, account.negative_flagged = wallets[account.pk]
    return result


#: Postings per call up to which the PostgreSQL statement is prepared (parsed and planned once
#: per connection and batch size); bigger batches are planned for their own array sizes.
PREPARED_UP_TO = 16

#: ``_post_postgresql``'s statement; ``{wallets}`` and the other fields are ``array_sql`` arrays.
#: The first debit that leaves a wallet below zero without ``allow_negative`` calls
#: ``ledger_overdraft`` (migration 0003), which fails the statement as the ``wallet_not_negative``
#: constraint would, naming the posting.
_POST_SQL = f"""
WITH locked AS MATERIALIZED (
    SELECT id, balance, negative_flagged, journal FROM {Account._meta.db_table}
    WHERE id = ANY({{wallets}}) ORDER BY id FOR UPDATE),
posting AS MATERIALIZED (
    SELECT * FROM unnest({{keys}}, {{kinds}}, {{currencies}}, {{memos}}, {{sources}}, {{destinations}}, {{amounts}})
    WITH ORDINALITY AS p(key, kind, currency_id, memo, source, destination, amount, n)),
txn AS (
    INSERT INTO {LedgerTransaction._meta.db_table} (key, kind, currency_id, memo, created_at)
    SELECT key, kind, currency_id, memo, %(now)b::timestamptz FROM posting
    WHERE (SELECT count(*) FROM locked) >= 0  -- every wallet is locked (in id order) before a key is taken
    ORDER BY n
    ON CONFLICT (key) DO NOTHING
    RETURNING key, id),
leg AS MATERIALIZED (
    SELECT p.key, txn.id AS transaction_id, e.account, e.amount, e.n, coalesce(l.journal, false) AS journal,
           l.balance + sum(e.amount) OVER (PARTITION BY e.account ORDER BY e.n) AS balance_after
    FROM posting p JOIN txn USING (key)
    CROSS JOIN LATERAL (VALUES (p.source, -p.amount, 2 * p.n), (p.destination, p.amount, 2 * p.n + 1))
        AS e(account, amount, n)
    LEFT JOIN locked l ON l.id = e.account),
entry AS (
    INSERT INTO {LedgerEntry._meta.db_table} (transaction_id, account_id, amount, balance_after)
    SELECT transaction_id, account, amount,
           CASE WHEN balance_after < 0 AND amount < 0 AND NOT journal AND NOT %(allow_negative)b::boolean
                THEN ledger_overdraft(key, account, balance_after - amount, -amount) ELSE balance_after END
    FROM leg ORDER BY n),
updated AS (
    UPDATE {Account._meta.db_table} AS a
    SET balance = w.balance, negative_flagged = a.negative_flagged OR (w.lowest < 0 AND NOT w.journal)
    FROM (SELECT l.id, l.journal, l.balance + sum(leg.amount) AS balance, min(leg.balance_after) AS lowest
          FROM leg JOIN locked l ON l.id = leg.account GROUP BY l.id, l.journal, l.balance) AS w
    WHERE a.id = w.id AND a.id = ANY({{wallets}})  -- the array: an index scan, whatever the estimates
    RETURNING a.id, a.balance, a.negative_flagged)
SELECT key, id, NULL::numeric, NULL::boolean FROM txn
UNION ALL
SELECT NULL, l.id, coalesce(u.balance, l.balance), coalesce(u.negative_flagged, l.negative_flagged)
FROM locked l LEFT JOIN updated u USING (id)
"""


def _post_postgresql(postings, allow_negative, now):
    """``post``'s writing in ONE statement (``_POST_SQL``): lock the wallets in id order, insert the
    transactions whose key is free (``ON CONFLICT DO NOTHING``: a concurrent post of the same key
    waits for it), their entries with each wallet's running balance, and the wallets' new balances.
    Parameters go in binary (``accounts.sql``); a small batch runs as a prepared statement, a
    bigger one with the planner settings ``BY_KEY``.
    Returns ``({key: pk} of the transactions written, {wallet pk: [balance, negative_flagged]})``;
    raises ``InsufficientFunds`` (the statement then wrote nothing)."""
    spread = len(postings) <= PREPARED_UP_TO
    fields, params = {}, {"now": now, "allow_negative": allow_negative}
    for name, values, sql_type in (
            ("wallets", _wallet_ids(postings), "bigint"),
            ("keys", [p.key for p in postings], "varchar"),
            ("kinds", [p.kind for p in postings], "varchar"),
            ("currencies", [p.source.currency_id for p in postings], "varchar"),
            ("memos", [p.memo for p in postings], "varchar"),
            ("sources", [p.source.pk for p in postings], "bigint"),
            ("destinations", [p.destination.pk for p in postings], "bigint"),
            ("amounts", [p.amount for p in postings], "numeric")):
        fields[name], values = array_sql(name, values, sql_type, spread=spread)
        params.update(values)
    try:
        rows = execute_binary(_POST_SQL.format(**fields), params, prepare=spread,
                              planner=None if spread else BY_KEY)
    except IntegrityError as error:
        diag = getattr(error.__cause__, "diag", None)
        if diag is not None and diag.constraint_name == "wallet_not_negative":
            raise InsufficientFunds(diag.message_primary) from None
        raise
    ids, wallets = {}, {}
    for key, pk, balance, flagged in rows:
        if key is not None:
            ids[key] = pk
        else:
            wallets[pk] = [balance, flagged]
    return ids, wallets


def _post_portable(postings, allow_negative, now):
    """``post``'s writing on any database (SQLite): lock the wallets (``SELECT ... FOR UPDATE`` in
    pk order), skip the keys already taken, check and compute the balances here, then write with
    ``executemany``. Returns what ``_post_postgresql`` returns."""
    locked = list(Account.objects.select_for_update().filter(pk__in=_wallet_ids(postings)).order_by("pk")
                  .values_list("pk", "balance", "negative_flagged", "journal"))
    journals = {pk for pk, _, _, journal in locked if journal}
    wallets = {pk: [balance, flagged] for pk, balance, flagged, _ in locked}
    taken = set(LedgerTransaction.objects.filter(key__in=[p.key for p in postings]).values_list("key", flat=True))
    new = [p for p in postings if p.key not in taken]
    entry_rows = []
    for p in new:
        for account, amount in ((p.source, -p.amount), (p.destination, p.amount)):
            wallet = wallets.get(account.pk)
            balance_after = None
            if wallet is not None:
                wallet[0] += amount
                if wallet[0] < 0 and account.pk not in journals:
                    if amount < 0 and not allow_negative:
                        raise InsufficientFunds(f"{p.key}: wallet {account.pk} holds "
                                                f"{wallet[0] - amount}, needs {-amount}")
                    wallet[1] = True
                balance_after = wallet[0]
            entry_rows.append((p.key, account.pk, amount, balance_after))
    if not new:
        return {}, wallets
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {LedgerTransaction._meta.db_table} (key, kind, currency_id, memo, created_at) "
                           "VALUES (%s, %s, %s, %s, %s)",
                           [(p.key, p.kind, p.source.currency_id, p.memo, now) for p in new])
        keys = [p.key for p in new]
        ids = {}
        for i in range(0, len(keys), 5000):
            ids.update(LedgerTransaction.objects.filter(key__in=keys[i:i + 5000]).values_list("key", "pk"))
        cursor.executemany(f"INSERT INTO {LedgerEntry._meta.db_table} (transaction_id, account_id, amount, "
                           "balance_after) VALUES (%s, %s, %s, %s)",
                           [(ids[k], a, x, b) for k, a, x, b in entry_rows])
        cursor.executemany(f"UPDATE {Account._meta.db_table} SET balance = %s, negative_flagged = %s WHERE id = %s",
                           [(balance, flagged, pk) for pk, (balance, flagged) in wallets.items()])
    return ids, wallets


def post_one(**posting):
    """``post`` for a single ``Posting(**posting)``; returns its ``LedgerTransaction``."""
    allow_negative = posting.pop("allow_negative", False)
    return post([Posting(**posting)], allow_negative=allow_negative)[0]


# --- accounts -------------------------------------------------------------------------------------

def _id(value):
    """The primary key of a model instance, or the value itself (a pk or a currency code)."""
    return getattr(value, "pk", value)


def wallet_for(*, player, currency):
    """The player's wallet in ``currency`` (a ``Currency`` or its code), created empty if missing:
    its operator is the player's, and it is a journal (``Account.journal``) when that operator is
    seamless."""
    wallet = Account.objects.filter(kind=Account.Kind.WALLET, player=player, currency_id=_id(currency)).first()
    if wallet is None:
        wallet, _ = Account.objects.get_or_create(
            kind=Account.Kind.WALLET, player=player, currency_id=_id(currency),
            defaults={"operator_id": player.operator_id,
                      "journal": player.operator.wallet_mode == Operator.WalletMode.SEAMLESS})
    return wallet


def house_account(*, name, currency, operator):
    """``operator``'s (an ``Operator`` or pk) house account ``name`` (``table:<code>``,
    ``adjustments``) in ``currency``, created if missing."""
    account, _ = Account.objects.get_or_create(kind=Account.Kind.HOUSE, name=name, currency_id=_id(currency),
                                               operator_id=_id(operator))
    return account


def cashier_account(*, currency, operator):
    """``operator``'s (an ``Operator`` or pk) cashier account of ``currency``: the outside world for
    its deposits and withdrawals."""
    account, _ = Account.objects.get_or_create(kind=Account.Kind.CASHIER, name="cashier", currency_id=_id(currency),
                                               operator_id=_id(operator))
    return account


def create_player(*, user, code, account_kind=Player.Kind.REAL, operator=None):
    """Create ``operator``'s (default: the default operator's) ``Player`` ``code`` for a Django ``user``."""
    operator = operator or default_operator()
    return Player.objects.create(user=user, operator=operator, code=code, game_code=operator.game_code(code),
                                 account_kind=account_kind)


def default_operator():
    """The default operator (``DEFAULT_OPERATOR``), created if missing."""
    operator, _ = Operator.objects.get_or_create(code=DEFAULT_OPERATOR, defaults={"name": "Default operator"})
    return operator


# --- the movements --------------------------------------------------------------------------------

def deposit(*, wallet, amount, key, memo=""):
    """Credit ``amount`` to a player ``wallet`` from its operator's cashier (transfers, tests, demo set-up)."""
    return post_one(key=key, kind=Kind.DEPOSIT, source=cashier_account(currency=wallet.currency_id,
                                                                       operator=wallet.operator_id),
                    destination=wallet, amount=amount, memo=memo)


def withdraw(*, wallet, amount, key, memo=""):
    """Pay ``amount`` out of a player ``wallet`` to its operator's cashier; ``InsufficientFunds`` if it can't."""
    return post_one(key=key, kind=Kind.WITHDRAWAL, source=wallet,
                    destination=cashier_account(currency=wallet.currency_id, operator=wallet.operator_id),
                    amount=amount, memo=memo)


def post_stake(*, wallet, house, amount, key, memo=""):
    """Debit a stake (``stake:<bet>``, ``double:<bet>``…) from ``wallet`` to the table's ``house``."""
    return post_one(key=key, kind=Kind.STAKE, source=wallet, destination=house, amount=amount, memo=memo)


def post_return(*, wallet, house, amount, key, memo=""):
    """Credit a bet's return (stake back + winnings, ``payout:<bet>``) from ``house`` to ``wallet``."""
    return post_one(key=key, kind=Kind.PAYOUT, source=house, destination=wallet, amount=amount, memo=memo)


def refund(*, wallet, house, amount, key, memo=""):
    """Give a stake back in full (a void, RULES 10; ``refund:<bet>``) from ``house`` to ``wallet``."""
    return post_one(key=key, kind=Kind.REFUND, source=house, destination=wallet, amount=amount, memo=memo)


def post_adjustment(*, wallet, house, amount, key, memo=""):
    """A signed correction (``adjust:<dispute>``): ``amount`` > 0 credits the player from ``house``,
    < 0 debits the player (``InsufficientFunds`` if the wallet cannot cover it)."""
    value = parse_amount(amount, wallet.currency.minor_units, allow_negative=True)
    if value >= 0:
        return post_one(key=key, kind=Kind.ADJUSTMENT, source=house, destination=wallet, amount=value, memo=memo)
    return post_one(key=key, kind=Kind.ADJUSTMENT, source=wallet, destination=house, amount=-value, memo=memo)
