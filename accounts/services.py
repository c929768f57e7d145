"""The ledger's write side: every change of a balance goes through ``post`` (one or many postings,
in one database transaction, idempotent on each posting's key).

A *posting* moves a positive ``amount`` from ``source`` to ``destination`` (two ledger entries,
``-amount`` and ``+amount``, summing to zero) in one currency. Player wallets are locked with
``SELECT ... FOR UPDATE`` in primary-key order (no deadlocks), their balances updated in the same
transaction; they never go below zero unless the caller allows it for a reversal, which flags
the wallet for operators, and never reach ``MONEY_LIMIT`` either way. Money is ``Decimal`` in the
currency's major units (``"12.35"`` EUR).
"""

from decimal import Decimal
from typing import NamedTuple

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from . import chain
from .exceptions import BalanceLimit, CurrencyMismatch, IdempotencyConflict, InsufficientFunds
from .models import DEFAULT_OPERATOR, Account, LedgerEntry, LedgerTransaction, Operator, Player
from .money import MONEY_LIMIT, amount_string, parse_amount
from .sql import BY_KEY, array_sql, execute_binary, instances, number_array

Kind = LedgerTransaction.Kind


class Posting(NamedTuple):
    """One movement of money: ``amount`` (> 0, ``Decimal``/str/int, never float) leaves ``source`` and
    arrives in ``destination`` (``Account`` rows of the same currency), under the unique ``key``.
    A named tuple (built faster than a frozen dataclass): a bulk post builds one per payout."""

    key: str
    kind: str
    source: Account
    destination: Account
    amount: Decimal
    memo: str = ""


def _validated(posting, parsed):
    """``posting`` checked, its amount parsed (``parse_amount``) in its currency's minor units;
    ``parsed``: ``{(amount, minor units): parsed}`` of the finite ``Decimal`` amounts parsed so far
    in this post (a bulk post's amounts repeat; the result depends on nothing else)."""
    src, dst = posting.source, posting.destination
    if src.currency_id != dst.currency_id:
        raise CurrencyMismatch(f"{posting.key}: {src.currency_id} account cannot pay a {dst.currency_id} account")
    if src.operator_id != dst.operator_id:
        raise CurrencyMismatch(f"{posting.key}: an account of one operator cannot pay another operator's")
    if src.pk == dst.pk:
        raise IdempotencyConflict(f"{posting.key}: source and destination are the same account")
    value, minor_units = posting.amount, src.currency.minor_units
    known = type(value) is Decimal and value.is_finite()
    amount = parsed.get((value, minor_units)) if known else None
    if amount is None:
        amount = parse_amount(value, minor_units)
        if known:
            parsed[value, minor_units] = amount
    if type(value) is Decimal and amount == value and len(posting.memo) <= 255:
        return posting  # valid as it is: a bulk post's many postings are not copied
    return Posting(posting.key, posting.kind, src, dst, amount, posting.memo[:255])


def _same_movement(existing, posting):
    legs = {(e.account_id, e.amount) for e in existing.entries.all()}
    return (existing.kind == posting.kind
            and legs == {(posting.source.pk, -posting.amount), (posting.destination.pk, posting.amount)})


def _locked_ids(postings, chains):
    """The pks of the accounts a post locks, in lock order (ascending): the wallets ``postings``
    touch, and ``chains`` (each posting's ``accounts.chain.chain_account``: the source of a
    posting that touches no wallet)."""
    wallet = Account.Kind.WALLET.value
    return sorted({*(a.pk for p in postings for a in (p.source, p.destination) if a.kind == wallet), *chains})


def post(postings, *, allow_negative=False, transactions=True):
    """Write ``postings`` (a sequence of ``Posting``) as ledger transactions, all or nothing.

    A key already posted with the same movement returns the existing transaction and moves no
    money; with a different movement it raises ``IdempotencyConflict``. Returns the transactions in
    the order of ``postings``; with ``transactions=False`` None, no instance built for them (a bulk
    caller that reads none: a settlement's payouts, a placing's stakes), a key already posted
    compared all the same. Raises ``InvalidAmount``, ``CurrencyMismatch``, ``InsufficientFunds``
    (a debit would leave a wallet below zero; with ``allow_negative`` it may, and is flagged instead:
    reversals only, voiding or correcting a SETTLED round; a credit to a wallet a reversal left
    negative is always allowed: it owes less after), ``BalanceLimit`` (a posting would bring a
    wallet's balance to ``MONEY_LIMIT`` or beyond, either sign), ``IdempotencyConflict`` (also for
    a key repeated within one call). A journal wallet (a seamless player's, ``Account.journal``) is
    never checked for funds nor flagged: its operator decides funds; its balance (the net of what
    the platform moved) is held within ``MONEY_LIMIT`` all the same.

    Runs in the caller's transaction, or in one of its own. On PostgreSQL the writing of up to
    ``PREPARED_UP_TO`` postings is ONE statement (``_post_postgresql``), so one posting outside a
    transaction is exactly one statement, committed on its own: a transaction with one round trip;
    a bigger batch takes three (``_post_bulk``). Elsewhere (SQLite, the zero-setup default) it
    takes a few (``_post_portable``).
    """
    parsed = {}
    postings = [_validated(p, parsed) for p in postings]
    if len({p.key for p in postings}) != len(postings):
        raise IdempotencyConflict("the same key appears twice in one call")
    if not postings:
        return []
    if connection.vendor == "postgresql" and len(postings) == 1 and connection.get_autocommit():
        # One statement is all or nothing by itself; a key found taken wrote nothing, so the
        # comparison that follows it needs no transaction either.
        return _post(postings, allow_negative, _post_postgresql, transactions)
    if connection.vendor != "postgresql":
        write = _post_portable
    else:
        write = _post_postgresql if len(postings) <= PREPARED_UP_TO else _post_bulk
    with transaction.atomic():
        return _post(postings, allow_negative, write, transactions)


def _post(postings, allow_negative, write, transactions):
    """``post`` once validated: ``write`` (``_post_postgresql`` or ``_post_portable``) writes the
    postings whose key is free; the others are compared with what their key holds. Returns the
    transactions, or None without ``transactions``."""
    now = timezone.now()
    written, wallets = write(postings, allow_negative, now)
    # Keys already taken (before this call, or by a concurrent call this one waited for): compare.
    taken = [p for p in postings if p.key not in written]
    existing = ({t.key: t for t in LedgerTransaction.objects.filter(key__in=[p.key for p in taken])
                 .prefetch_related("entries")} if taken else {})
    for p in taken:
        if not _same_movement(existing[p.key], p):
            raise IdempotencyConflict(f"key {p.key!r} was already used for a different movement")
    for p in postings:  # keep the caller's instances in step with the database
        for account in (p.source, p.destination):
            state = wallets.get(account.id)  # id: the pk, read plainly
            if state is not None:
                account.balance, account.negative_flagged = state
    if not transactions:
        return None
    fresh = [p for p in postings if p.key in written]
    made = dict(zip([p.key for p in fresh], instances(LedgerTransaction, [
        (pk, p.key, p.kind, p.source.currency_id, p.memo, now, chain.as_bytes(prev_hash), bytes(chain_hash))
        for p in fresh for pk, prev_hash, chain_hash in [written[p.key]]])))
    return [made.get(p.key) or existing[p.key] for p in postings]


#: Postings per call up to which PostgreSQL writes them in one prepared statement (parsed and
#: planned once per connection and batch size, ``_post_postgresql``); bigger batches are written
#: by ``_post_bulk``.
PREPARED_UP_TO = 16


def _field_sql(expression):
    """The SQL of ``accounts.chain.field`` of ``expression`` (a text): ``ledger_field``'s body
    (migration 0008) written out, since PostgreSQL inlines no call of it whose argument is more
    than a column (its parameter appears twice), and a call per field and posting was most of a
    bulk post's hashing."""
    return f"length(coalesce({expression}, '')) || ':' || coalesce({expression}, '')"


#: The content a posting's link hashes (``accounts.chain.content``), in ``_POST_SQL``'s names.
_CONTENT_SQL = " || ".join(_field_sql(expression) for expression in (
    "f.key", "f.kind", "f.currency_id", "f.memo", "%(micros)b::bigint::text",
    "s.account::text", "s.amount::numeric(20, 4)::text", "s.balance_after::numeric(20, 4)::text",
    "d.account::text", "d.amount::numeric(20, 4)::text", "d.balance_after::numeric(20, 4)::text"))

#: ``_post_postgresql``'s statement; ``{locks}`` and the other fields are ``array_sql`` arrays.
#: Every account it locks (``_locked_ids``) is locked first, in id order; then the keys already
#: taken are read with a snapshot of their own (``ledger_taken_keys``, migration 0007: a posting of
#: the same key by a transaction this one waited for is seen), so that the chains' links
#: (``accounts.chain``, ``ledger_chain``) are computed over exactly the transactions written.
#: A key another transaction took meanwhile for another wallet fails the statement
#: (``ledger_all_written``) rather than leave a link to a transaction that was never written. The
#: first debit that leaves a wallet below zero without ``allow_negative`` calls
#: ``ledger_overdraft`` (migration 0003), which fails the statement as the ``wallet_not_negative``
#: constraint would, naming the posting; the first that brings a wallet to ``MONEY_LIMIT`` (either
#: sign) calls ``ledger_balance_limit`` (migration 0012), failing it as ``wallet_balance_limit``.
#: Both read the running balance from the balance locked.
_POST_SQL = f"""
WITH locked AS MATERIALIZED (
    SELECT id, kind = 'wallet' AS is_wallet, balance, negative_flagged, journal, chain_head
    FROM {Account._meta.db_table} WHERE id = ANY({{locks}}) ORDER BY id FOR UPDATE),
posting AS MATERIALIZED (
    SELECT * FROM unnest({{keys}}, {{kinds}}, {{currencies}}, {{memos}}, {{sources}}, {{destinations}}, {{amounts}},
                         {{chains}})
    WITH ORDINALITY AS p(key, kind, currency_id, memo, source, destination, amount, chain, n)),
taken AS MATERIALIZED (SELECT ledger_taken_keys({{keys}}, (SELECT count(*) FROM locked)) AS keys),
fresh AS MATERIALIZED (SELECT p.* FROM posting p, taken WHERE NOT p.key = ANY(taken.keys)),
leg AS MATERIALIZED (
    SELECT f.key, e.account, e.amount, e.n, coalesce(l.journal, false) AS journal,
           CASE WHEN l.is_wallet THEN l.balance + sum(e.amount) OVER (PARTITION BY e.account ORDER BY e.n)
           END AS balance_after
    FROM fresh f
    CROSS JOIN LATERAL (VALUES (f.source, -f.amount, 2 * f.n), (f.destination, f.amount, 2 * f.n + 1))
        AS e(account, amount, n)
    LEFT JOIN locked l ON l.id = e.account),
linked AS MATERIALIZED (
    SELECT f.key, f.n, f.chain, h.chain_head AS head, ledger_chain(h.chain_head, convert_to({_CONTENT_SQL}, 'UTF8'))
           OVER (PARTITION BY f.chain ORDER BY f.n) AS chain_hash
    FROM fresh f JOIN leg s ON s.n = 2 * f.n JOIN leg d ON d.n = 2 * f.n + 1 JOIN locked h ON h.id = f.chain),
txn AS (
    INSERT INTO {LedgerTransaction._meta.db_table} (key, kind, currency_id, memo, created_at, prev_hash, chain_hash)
    SELECT f.key, f.kind, f.currency_id, f.memo, %(now)b::timestamptz,
           coalesce(lag(k.chain_hash) OVER (PARTITION BY k.chain ORDER BY k.n), k.head), k.chain_hash
    FROM fresh f JOIN linked k USING (key)
    ORDER BY f.n
    ON CONFLICT (key) DO NOTHING
    RETURNING key, id, prev_hash, chain_hash),
entry AS (
    INSERT INTO {LedgerEntry._meta.db_table} (transaction_id, account_id, amount, balance_after)
    SELECT txn.id, leg.account, leg.amount,
           CASE WHEN leg.balance_after < 0 AND leg.amount < 0 AND NOT leg.journal AND NOT %(allow_negative)b::boolean
                THEN ledger_overdraft(leg.key, leg.account, leg.balance_after - leg.amount, -leg.amount)
                WHEN abs(leg.balance_after) >= {MONEY_LIMIT}
                THEN ledger_balance_limit(leg.key, leg.account, leg.balance_after)
                ELSE leg.balance_after END
    FROM leg JOIN txn USING (key) ORDER BY leg.n),
updated AS (
    UPDATE {Account._meta.db_table} AS a
    SET balance = coalesce(w.balance, a.balance),
        negative_flagged = a.negative_flagged OR coalesce(w.lowest < 0 AND NOT w.journal, false),
        chain_head = coalesce(w.head, a.chain_head)
    FROM (SELECT l.id, l.journal, l.balance + b.total AS balance, b.lowest, c.head
          FROM locked l
          LEFT JOIN (SELECT account, sum(amount) AS total, min(balance_after) AS lowest FROM leg GROUP BY account) b
              ON b.account = l.id AND l.is_wallet
          LEFT JOIN (SELECT DISTINCT ON (chain) chain, chain_hash AS head FROM linked ORDER BY chain, n DESC) c
              ON c.chain = l.id
          WHERE b.account IS NOT NULL OR c.chain IS NOT NULL) AS w
    WHERE a.id = w.id AND a.id = ANY({{locks}})  -- the array: an index scan, whatever the estimates
    RETURNING a.id, a.balance, a.negative_flagged)
SELECT key, id, NULL::numeric, NULL::boolean, prev_hash, chain_hash FROM txn
UNION ALL
SELECT NULL, l.id, coalesce(u.balance, l.balance), coalesce(u.negative_flagged, l.negative_flagged), NULL, NULL
FROM locked l LEFT JOIN updated u USING (id) WHERE l.is_wallet
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL WHERE NOT ledger_all_written((SELECT count(*) FROM txn),
                                                                        (SELECT count(*) FROM fresh))
"""


def _posting_arrays(postings):
    """``[(name, values, SQL type)]``: the arrays of ``postings``' own fields (``Posting``), in the
    names ``_POST_SQL`` and ``_BULK_SQL`` read them by."""
    return [("keys", [p.key for p in postings], "varchar"), ("kinds", [p.kind for p in postings], "varchar"),
            ("currencies", [p.source.currency_id for p in postings], "varchar"),
            ("memos", [p.memo for p in postings], "varchar"), ("sources", [p.source.pk for p in postings], "bigint"),
            ("destinations", [p.destination.pk for p in postings], "bigint"),
            ("amounts", [p.amount for p in postings], "numeric")]


def _post_postgresql(postings, allow_negative, now):
    """``post``'s writing in ONE statement (``_POST_SQL``): lock the wallets (and chain accounts) in
    id order, insert the transactions whose key is free with their chains' links
    (``accounts.chain``), their entries with each wallet's running balance, and the wallets' new
    balances and chain heads. Parameters go in binary (``accounts.sql``), one per element
    (``array_sql``'s ``spread``): a prepared statement, planned once per batch size.
    Returns ``({key: (pk, prev_hash, chain_hash)} of the transactions written, {wallet pk: [balance,
    negative_flagged]})``; raises ``InsufficientFunds``, ``BalanceLimit`` or ``IdempotencyConflict``
    (the statement then wrote nothing)."""
    fields, params = {}, {"now": now, "micros": chain.microseconds(now), "allow_negative": allow_negative}
    chains = [chain.chain_account(p.source, p.destination) for p in postings]
    for name, values, sql_type in (("locks", _locked_ids(postings, chains), "bigint"), *_posting_arrays(postings),
                                   ("chains", chains, "bigint")):
        fields[name], values = array_sql(name, values, sql_type, spread=True)
        params.update(values)
    try:
        rows = execute_binary(_POST_SQL.format(**fields), params, prepare=True)
    except IntegrityError as error:
        diag = getattr(error.__cause__, "diag", None)
        key = (getattr(diag, "message_primary", None) or "").rpartition(": wallet ")[0]  # "<key>: wallet <id> ..."
        if diag is not None and diag.constraint_name == "wallet_not_negative":
            raise _insufficient_funds(postings, key) from None
        if diag is not None and diag.constraint_name == "wallet_balance_limit":
            raise _balance_limit(postings, key) from None
        if diag is not None and diag.constraint_name == "ledger_key_taken_meanwhile":
            raise IdempotencyConflict(diag.message_primary) from None
        raise
    written, wallets = {}, {}
    for key, pk, balance, flagged, prev_hash, chain_hash in rows:
        if key is not None:
            written[key] = (pk, prev_hash, chain_hash)
        else:
            wallets[pk] = [balance, flagged]
    return written, wallets


def _refused(postings, key):
    """``(posting, its currency's minor units)``: the posting ``key`` of ``postings`` (else the
    first) that a post refuses. The refusals' sentences, for any API, name no posting, wallet or
    balance, and show money in those minor units."""
    posting = next((p for p in postings if p.key == key), postings[0])
    return posting, posting.source.currency.minor_units  # loaded by ``_validated``: no query in a failed statement


def _insufficient_funds(postings, key):
    """The ``InsufficientFunds`` of the posting ``key`` (``_refused``) a wallet cannot cover."""
    posting, minor_units = _refused(postings, key)
    return InsufficientFunds(f"the player's wallet cannot cover {amount_string(posting.amount, minor_units)}: "
                             "nothing was moved")


def _balance_limit(postings, key):
    """The ``BalanceLimit`` of the posting ``key`` (``_refused``) that would bring a wallet to
    ``MONEY_LIMIT``."""
    _, minor_units = _refused(postings, key)
    return BalanceLimit(f"the player's wallet would reach the platform's bound on a balance, "
                        f"{amount_string(MONEY_LIMIT, minor_units)} either way: nothing was moved")


def _computed(postings, chains, locked, taken, allow_negative, now):
    """What writing ``postings`` changes, computed from ``chains`` (each posting's
    ``accounts.chain.chain_account``), ``locked`` (the rows ``(pk, kind, balance,
    negative_flagged, journal, chain_head)`` of the accounts they lock, read under the locks) and
    ``taken`` (their keys already posted): ``(new, entries, links, wallets, heads, owners)``: the
    postings whose key is free, in order; their entries ``(key, account, amount, balance_after)``
    (source, destination); per new posting ``(prev_hash, chain_hash)`` (``accounts.chain``); ``{wallet
    pk: [balance, negative_flagged]}`` of every locked wallet after them; ``{account pk: chain
    head}``; the accounts whose chain grew. Raises ``InsufficientFunds`` for the first debit that
    leaves a wallet below zero without ``allow_negative`` (a journal wallet is never checked), and
    ``BalanceLimit`` for the first posting that brings a wallet (a journal too) to ``MONEY_LIMIT``
    or beyond, either sign."""
    journals = {pk for pk, _, _, _, journal, _ in locked if journal}
    wallets = {pk: [balance, flagged] for pk, kind, balance, flagged, _, _ in locked if kind == Account.Kind.WALLET}
    heads = {pk: chain.as_bytes(head) for pk, _, _, _, _, head in locked}
    new, entries, links, owners = [], [], [], set()
    contents = chain.Contents(now)
    for p, owner in zip(postings, chains):
        if p.key in taken:
            continue
        new.append(p)
        legs = []
        for account, amount in ((p.source.id, -p.amount), (p.destination.id, p.amount)):  # id: the pk, read plainly
            wallet = wallets.get(account)
            balance_after = None
            if wallet is not None:
                balance_after = wallet[0] = wallet[0] + amount
                if balance_after < 0 and account not in journals:
                    if amount < 0 and not allow_negative:
                        raise _insufficient_funds(postings, p.key)
                    wallet[1] = True
                if not -MONEY_LIMIT < balance_after < MONEY_LIMIT:
                    raise _balance_limit(postings, p.key)
            entries.append((p.key, account, amount, balance_after))
            legs.append((account, amount, balance_after))
        prev = heads.get(owner)
        heads[owner] = head = chain.link(prev, contents(p.key, p.kind, p.source.currency_id, p.memo, legs))
        links.append((prev, head))
        owners.add(owner)
    return new, entries, links, wallets, heads, owners


#: ``_post_bulk``'s writing statement: the transactions (in the postings' order: their ids
#: ascending), their entries (source, destination), and the locked accounts' balances, flags and
#: chain heads (None: unchanged), the arrays in binary, the numbers as literals.
_BULK_SQL = f"""
WITH posting AS MATERIALIZED (
    SELECT * FROM unnest({{keys}}, {{kinds}}, {{currencies}}, {{memos}}, {{prev}}, {{hash}}, {{sources}},
                         {{destinations}}, {{amounts}}, %(source_after)s::numeric[], %(destination_after)s::numeric[])
    WITH ORDINALITY AS p(key, kind, currency_id, memo, prev_hash, chain_hash, source, destination, amount,
                         source_after, destination_after, n)),
txn AS (
    INSERT INTO {LedgerTransaction._meta.db_table} (key, kind, currency_id, memo, created_at, prev_hash, chain_hash)
    SELECT key, kind, currency_id, memo, %(now)b::timestamptz, prev_hash, chain_hash FROM posting ORDER BY n
    RETURNING key, id),
entry AS (
    INSERT INTO {LedgerEntry._meta.db_table} (transaction_id, account_id, amount, balance_after)
    SELECT txn.id, e.account, e.amount, e.balance_after
    FROM posting p JOIN txn USING (key)
    CROSS JOIN LATERAL (VALUES (p.source, -p.amount, p.source_after, 2 * p.n),
                               (p.destination, p.amount, p.destination_after, 2 * p.n + 1))
        AS e(account, amount, balance_after, n)
    ORDER BY e.n),
updated AS (
    UPDATE {Account._meta.db_table} AS a
    SET balance = coalesce(u.balance, a.balance), negative_flagged = coalesce(u.flagged, a.negative_flagged),
        chain_head = coalesce(u.head, a.chain_head)
    FROM unnest({{accounts}}, %(balances)s::numeric[], %(flags)b::boolean[], %(heads)b::bytea[])
        AS u(id, balance, flagged, head)
    WHERE a.id = u.id AND a.id = ANY({{accounts}}))  -- the array: an index scan, whatever the estimates
SELECT key, id FROM txn
"""


def _post_bulk(postings, allow_negative, now):
    """``post``'s writing on PostgreSQL of a batch bigger than ``PREPARED_UP_TO``, in three
    statements: the wallets (and chain accounts) locked in id order and read; then the keys
    already taken (a statement of its own after the locks: its snapshot sees a posting of a
    transaction the locks waited for); the balances and the chains' links computed here
    (``_computed``); then ONE statement (``_BULK_SQL``) writing the transactions, their entries
    and the accounts, with the planner settings ``BY_KEY`` (and joins hashed: a sort of the keys
    would compare them by collation). Returns what ``_post_postgresql`` returns; raises
    ``InsufficientFunds`` or ``BalanceLimit`` (nothing written), or ``IdempotencyConflict`` (a key
    another transaction took meanwhile, for another wallet: the statement then wrote nothing)."""
    chains = [chain.chain_account(p.source, p.destination) for p in postings]
    locked = execute_binary(
        f"SELECT id, kind, balance, negative_flagged, journal, chain_head FROM {Account._meta.db_table} "
        "WHERE id = ANY(%s::bigint[]) ORDER BY id FOR UPDATE",
        [number_array(_locked_ids(postings, chains))], planner=BY_KEY)
    taken = {key for (key,) in execute_binary(
        f"SELECT key FROM {LedgerTransaction._meta.db_table} WHERE key = ANY(%b::varchar[])",
        [[p.key for p in postings]], planner=BY_KEY)}
    new, entries, links, wallets, heads, owners = _computed(postings, chains, locked, taken, allow_negative, now)
    if not new:
        return {}, wallets
    accounts = sorted(wallets.keys() | owners)
    fields, params = {}, {
        "now": now, "source_after": number_array(b for _, _, _, b in entries[::2]),
        "destination_after": number_array(b for _, _, _, b in entries[1::2]),
        "balances": number_array(wallets[pk][0] if pk in wallets else None for pk in accounts),
        "flags": [wallets[pk][1] if pk in wallets else None for pk in accounts],
        "heads": [heads[pk] if pk in owners else None for pk in accounts]}
    for name, values, sql_type in (*_posting_arrays(new), ("prev", [prev for prev, _ in links], "bytea"),
                                   ("hash", [hash_ for _, hash_ in links], "bytea"), ("accounts", accounts, "bigint")):
        fields[name], values = array_sql(name, values, sql_type, spread=False)
        params.update(values)
    try:
        rows = execute_binary(_BULK_SQL.format(**fields), params, planner={**BY_KEY, "enable_mergejoin": "off"})
    except IntegrityError as error:
        diag = getattr(error.__cause__, "diag", None)
        if diag is not None and diag.sqlstate == "23505" and diag.table_name == LedgerTransaction._meta.db_table:
            raise IdempotencyConflict(f"a key of this posting was used meanwhile for another movement: "
                                      f"{diag.message_detail or diag.message_primary}") from None
        raise
    ids = dict(rows)
    return {p.key: (ids[p.key], prev, hash_) for p, (prev, hash_) in zip(new, links)}, wallets


def _post_portable(postings, allow_negative, now):
    """``post``'s writing on any database (SQLite): lock the wallets and chain accounts (``SELECT
    ... FOR UPDATE`` in pk order), skip the keys already taken, check and compute the balances and
    the chains' links here (``_computed``), then write with ``executemany``. Returns what
    ``_post_postgresql`` returns."""
    chains = [chain.chain_account(p.source, p.destination) for p in postings]
    locked = list(Account.objects.select_for_update().filter(pk__in=_locked_ids(postings, chains)).order_by("pk")
                  .values_list("pk", "kind", "balance", "negative_flagged", "journal", "chain_head"))
    taken = set(LedgerTransaction.objects.filter(key__in=[p.key for p in postings]).values_list("key", flat=True))
    new, entry_rows, links, wallets, heads, owners = _computed(postings, chains, locked, taken, allow_negative, now)
    if not new:
        return {}, wallets
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {LedgerTransaction._meta.db_table} (key, kind, currency_id, memo, created_at, "
                           "prev_hash, chain_hash) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                           [(p.key, p.kind, p.source.currency_id, p.memo, now, prev, hash_)
                            for p, (prev, hash_) in zip(new, links)])
        keys = [p.key for p in new]
        ids = {}
        for i in range(0, len(keys), 5000):
            ids.update(LedgerTransaction.objects.filter(key__in=keys[i:i + 5000]).values_list("key", "pk"))
        written = {p.key: (ids[p.key], prev, hash_) for p, (prev, hash_) in zip(new, links)}
        cursor.executemany(f"INSERT INTO {LedgerEntry._meta.db_table} (transaction_id, account_id, amount, "
                           "balance_after) VALUES (%s, %s, %s, %s)",
                           [(ids[k], a, x, b) for k, a, x, b in entry_rows])
        cursor.executemany(f"UPDATE {Account._meta.db_table} SET balance = %s, negative_flagged = %s WHERE id = %s",
                           [(balance, flagged, pk) for pk, (balance, flagged) in wallets.items()])
        cursor.executemany(f"UPDATE {Account._meta.db_table} SET chain_head = %s WHERE id = %s",
                           [(heads[pk], pk) for pk in sorted(owners)])
    return written, wallets


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
