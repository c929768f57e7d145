"""The ledger's hash chains: tamper evidence for every ledger transaction.

Each transaction is a link of ONE chain, the chain of its ``chain_account``: its player wallet
(the wallet with the lower primary key when both legs are wallets), or its source account when
neither leg is a wallet. A wallet is locked by every posting that touches it
(``accounts.services.post``), so its chain grows under a lock the posting holds anyway: postings
on different wallets never wait for one another, and no chain head is shared by a table, an
operator or the platform.

A link stores ``prev_hash`` (the ``chain_hash`` of the chain's previous transaction; None for the
first) and ``chain_hash`` = SHA-256(``prev_hash`` or b"", ``content``), where ``content`` is the
transaction's key, kind, currency, memo, creation time (in microseconds since the epoch) and both
entries (account, amount, balance after) in order, each field length-prefixed (``field``) so that
no two transactions share a content. The chain account keeps its last link in ``chain_head``, so a
removed tail is found too. On PostgreSQL a batch of up to ``accounts.services.PREPARED_UP_TO`` postings computes the
same bytes in its one statement (``accounts.services._POST_SQL``); a bigger batch, and any batch
elsewhere, computes them in Python (``accounts.services._computed``); ``verify`` recomputes every
chain from the rows.

Amounts are ``Decimal`` in the currency's major units, as stored (four decimals).
"""

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from .models import Account, LedgerEntry, LedgerTransaction

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: Amounts as the money columns hold them (``accounts.models.MONEY``: four decimals).
QUANTUM = Decimal("0.0001")


def field(value):
    """One field of a content: ``<length>:<text>`` (the empty text for None)."""
    text = "" if value is None else str(value)
    return f"{len(text)}:{text}"


def money(value):
    """An amount as the content writes it: four decimals (``-12.5000``), or None."""
    return None if value is None else Decimal(value).quantize(QUANTUM)


def microseconds(moment):
    """``moment`` (an aware datetime) in whole microseconds since the epoch."""
    return (moment - EPOCH) // timedelta(microseconds=1)


def content(*, key, kind, currency_id, memo, created_at, legs):
    """The bytes a transaction's link hashes: its fields and ``legs`` (``[(account id, amount,
    balance_after or None)]``, the entries in id order: the source's, then the destination's)."""
    return Contents(created_at)(key, kind, currency_id, memo, legs)


class Contents:
    """``content`` of transactions created at ``created_at`` (a bulk post's), the texts of the
    fields they repeat (kind, currency and memo; accounts; amounts) written once: called with
    ``content``'s arguments but ``created_at`` (``key, kind, currency_id, memo, legs``), returns
    the same bytes."""

    def __init__(self, created_at):
        self.micros = field(microseconds(created_at))
        self.heads, self.accounts, self.amounts = {}, {}, {}

    def __call__(self, key, kind, currency_id, memo, legs):
        head = self.heads.get((kind, currency_id, memo))
        if head is None:
            head = self.heads[kind, currency_id, memo] = field(kind) + field(currency_id) + field(memo) + self.micros
        parts = [field(key), head]
        for account_id, amount, balance_after in legs:
            parts += (self.accounts.get(account_id) or self._account(account_id),
                      self.amounts.get(amount) or self._amount(amount),
                      "0:" if balance_after is None else field(money(balance_after)))  # balances rarely repeat
        return "".join(parts).encode()

    def _account(self, account_id):
        text = self.accounts[account_id] = field(account_id)
        return text

    def _amount(self, amount):
        """``field(money(amount))``, kept for the next ``amount`` equal to it, except a zero, whose
        sign ``money`` keeps."""
        text = field(money(amount))
        if amount:
            self.amounts[amount] = text
        return text


def link(prev_hash, data):
    """The ``chain_hash`` of a link whose previous link is ``prev_hash`` (bytes or None) over ``data``."""
    return hashlib.sha256(bytes(prev_hash or b"") + data).digest()


def chain_account(source, destination):
    """The pk of the account whose chain a posting from ``source`` to ``destination`` (``Account``
    rows, their ``kind`` known) extends."""
    wallets = [a.pk for a in (source, destination) if a.is_wallet]
    return min(wallets) if wallets else source.pk


@dataclass(frozen=True)
class Break:
    """The first broken link found in a hash chain: the ``link`` (the id of the row whose link is
    broken; None for a broken head), the ``chain`` it belongs to (an account id, a table code) and
    ``why``; ``link_name`` and ``chain_name`` say what those are (``ledger transaction``,
    ``account``; ``round seal``, ``table``)."""

    link: int | None
    chain: object
    why: str
    link_name: str = "ledger transaction"
    chain_name: str = "account"

    def __str__(self):
        where = f"{self.link_name} {self.link}" if self.link is not None else "chain head"
        return f"{where} (chain of {self.chain_name} {self.chain}): {self.why}"


@dataclass
class Verified:
    """What a chain's ``verify`` read: ``links`` (rows) and ``chains`` checked, and the first
    ``broken`` link (None: every chain intact)."""

    links: int = 0
    chains: int = 0
    broken: Break | None = None

    def stop(self, *args, **names):
        """Keep ``Break(*args, **names)`` as the first broken link; returns self."""
        self.broken = Break(*args, **names)
        return self


def verify(*, chunk=5000):
    """Recompute every ledger chain from the rows, in transaction id order (streamed in chunks of
    ``chunk`` transactions), and compare each link's ``prev_hash`` and ``chain_hash`` and each
    chain account's ``chain_head``. Returns a ``Verified`` (``links``: transactions): a transaction edited, inserted,
    removed or re-linked behind the platform's back is its ``broken`` (the first one by id)."""
    kinds = dict(Account.objects.values_list("pk", "kind"))
    heads, result, last = {}, Verified(), 0
    while True:
        txns = list(LedgerTransaction.objects.filter(pk__gt=last).order_by("pk")
                    .values_list("pk", "key", "kind", "currency_id", "memo", "created_at", "prev_hash",
                                 "chain_hash")[:chunk])
        if not txns:
            break
        last = txns[-1][0]
        legs = {}
        for txn_id, account_id, amount, balance_after in (
                LedgerEntry.objects.filter(transaction_id__gte=txns[0][0], transaction_id__lte=last)
                .order_by("pk").values_list("transaction_id", "account_id", "amount", "balance_after")):
            legs.setdefault(txn_id, []).append((account_id, amount, balance_after))
        for pk, key, kind, currency_id, memo, created_at, prev_hash, chain_hash in txns:
            result.links += 1
            entries = legs.get(pk, [])
            if len(entries) != 2:
                return result.stop(pk, entries[0][0] if entries else 0, f"{len(entries)} entries, not 2")
            source, destination = (entries if entries[0][1] < 0 else entries[::-1])
            wallets = [a for a, _, _ in entries if kinds.get(a) == Account.Kind.WALLET]
            account = min(wallets) if wallets else source[0]
            expected_prev = heads.get(account)
            if as_bytes(prev_hash) != expected_prev:
                why = ("its previous link does not match: a transaction before it in its chain was changed, "
                       "removed or inserted" if expected_prev or prev_hash else "it claims a previous link, "
                       "but it is the first of its chain")
                return result.stop(pk, account, why)
            data = content(key=key, kind=kind, currency_id=currency_id, memo=memo, created_at=created_at,
                           legs=entries)
            if as_bytes(chain_hash) != link(expected_prev, data):
                return result.stop(pk, account, "its content does not match its hash (the row was edited)")
            heads[account] = as_bytes(chain_hash)
    result.chains = len(heads)
    stored = dict(Account.objects.filter(chain_head__isnull=False).values_list("pk", "chain_head"))
    for account in sorted(set(heads) | set(stored)):
        if as_bytes(stored.get(account)) != heads.get(account):
            return result.stop(None, account, "the account's chain head is not its last transaction's link "
                                                  "(the chain's end was removed, or the head edited)")
    return result


def as_bytes(value):
    """A binary column's value (``memoryview`` on PostgreSQL, ``bytes`` elsewhere) as bytes, or None."""
    return None if value is None else bytes(value)
