"""The wallet port: how wagering and settlement move a player's money, whoever keeps it.

A player of a ``transfer`` operator holds a wallet of the platform's ledger: every movement is a
ledger posting per bet (checked: a wallet never goes below zero). A player of a ``seamless``
operator keeps the money in the operator's wallet: the ledger's wallet is a journal
(``Account.journal``) and every movement is also a call of the operator's wallet
(``wallets.seamless``, docs/wallet-api.md). The callers describe the money; the adapter is chosen
here, per wallet, and nothing above knows which one moved it.

- ``move``: credits and corrections (payouts, refunds, reversals, resettles, adjustments), in the
  caller's transaction. Seamless movements are grouped as the protocol wants them (one credit per
  player per round and purpose, ``Move.group``), written to the outbox in the same transaction, and
  delivered after commit.
- ``open_debits`` / ``send_debits`` / ``take`` / ``drop_debits``: stakes and extra stakes, taken
  synchronously while the game server waits: a seamless stake's debit is recorded
  (``open_debits``), sent (``send_debits``, outside any transaction: at most the operator's
  timeout), and only a debit answered OK lets its bet be placed (``take``: the ledger posting);
  one answered OK and not kept, for any reason, is rolled back (``drop_debits``). Transfer stakes need only ``take``.
  A stake's debit holds a claim (its bet's position) while it is live: ``claims`` reads them.
- ``retry``: a supervisor sends a seamless movement that keeps failing again now.

Money is ``Decimal`` in the currency's major units with its minor-unit decimals, never a float.
"""

from dataclasses import dataclass, field
from decimal import Decimal
from typing import NamedTuple

from accounts.models import LedgerTransaction, Operator
from accounts.services import Posting, post

from . import seamless

Kind = LedgerTransaction.Kind


class Move(NamedTuple):
    """One bet's (or one adjustment's) money moving between a player's ``wallet`` and a ``house``
    account: ``amount`` (> 0) to the player (``to_player``) or from them, posted under the ledger
    ``key`` (``payout:<bet>``, ``refund:<bet>``, ``reverse:<bet>``...) of kind ``ledger_kind``.
    For a seamless player the moves of one ``group`` (``payout:<round>:<player>``...) are one
    movement of the operator's wallet, of protocol ``kind`` (``payout``, ``refund``, ``resettle``,
    ``adjustment``; a group that takes money back is a ``correction``), for ``round_ref`` at
    ``table_ref``; ``bet``: the bet it belongs to, if any; ``memo``: the posting's memo. A named
    tuple, as ``accounts.services.Posting``: a settlement builds one per payout."""

    key: str
    group: str
    kind: str
    ledger_kind: str
    wallet: object
    house: object
    amount: Decimal
    to_player: bool = True
    bet: int | None = None
    round_ref: str = ""
    table_ref: str = ""
    memo: str = ""


@dataclass(frozen=True)
class Closing:
    """A round closed for some players without money for them: each seamless player among
    ``wallets`` (``{player id: wallet}``, their wallets in the round's currency) gets a credit of
    0.00 under ``group_of(player_id)``, unless a move already credits that group
    (docs/wallet-api.md, "Payouts")."""

    wallets: dict
    group_of: object
    kind: str = "payout"
    round_ref: str = ""
    table_ref: str = ""
    bets_of: dict = field(default_factory=dict)


def _posting(key, kind, wallet, house, amount, to_player, memo=""):
    source, destination = (house, wallet) if to_player else (wallet, house)
    return Posting(key=key, kind=kind, source=source, destination=destination, amount=amount, memo=memo)


def move(moves, *, allow_negative=False, closing=None, transactions=True):
    """Move ``moves`` (``Move``), in the caller's transaction: a transfer player's as ledger postings
    (``allow_negative``: a debit may take the wallet below zero, flagged: reversals and resettles
    only); a seamless player's as one posting per group on its journal wallet plus one outbox
    movement per group, delivered after commit. ``closing`` (a ``Closing``): the zero credits of a
    round's seamless players. Returns ``[(wallet, LedgerTransaction)]``: each posting's player
    wallet and its transaction (the one its key already held, for a key posted before); a seamless
    player's group is one posting. With ``transactions=False`` returns None (the transfer players'
    transactions are not built: ``accounts.services.post``). Raises what ``accounts.services.post``
    raises."""
    plain = [m for m in moves if not m.wallet.journal]
    posted = post([_posting(m.key, m.ledger_kind, m.wallet, m.house, m.amount, m.to_player, m.memo) for m in plain],
                  allow_negative=allow_negative, transactions=transactions)
    journal = [m for m in moves if m.wallet.journal]
    closed = _closed_wallets(closing, {m.group for m in journal}) if closing else []
    written = seamless.write_outbox(journal, closed) if journal or closed else []
    return list(zip([m.wallet for m in plain], posted)) + written if transactions else None


def adjust(*, wallet, house, amount, key, memo=""):
    """Credit (``amount`` > 0) or take back (< 0) ``amount`` on a player's ``wallet`` against
    ``house``, under ledger key ``key`` (``adjust:dispute:<id>``, ``adjust:manual:<key>``), in the
    caller's transaction; for a seamless player also one ``adjustment`` credit (or ``correction``
    debit) of the operator's wallet. Returns the ledger transaction. Raises what ``move`` raises
    (``InsufficientFunds`` for a debit a transfer wallet cannot cover)."""
    move([Move(key=key, group=key, kind="adjustment", ledger_kind=Kind.ADJUSTMENT, wallet=wallet, house=house,
               amount=abs(amount), to_player=amount > 0, memo=memo)])
    return LedgerTransaction.objects.get(key=key)


def _closed_wallets(closing, groups):
    """``[(group, wallet, ...)]`` of the seamless players of ``closing`` without a move in their group."""
    if not any(wallet.journal for wallet in closing.wallets.values()):
        return []
    operators = set(Operator.objects.filter(wallet_mode=Operator.WalletMode.SEAMLESS).values_list("pk", flat=True))
    return [(closing.group_of(pk), wallet, closing.kind, closing.round_ref, closing.table_ref,
             closing.bets_of.get(pk, []))
            for pk, wallet in closing.wallets.items()
            if wallet.journal and wallet.operator_id in operators and closing.group_of(pk) not in groups]


@dataclass(frozen=True)
class Debit:
    """A stake (or an extra stake) of a seamless player, before its bet is placed: ``key`` (the
    movement's: ``stake:<round>:<record id>``, ``<kind>:<bet>[:<hand>]``), protocol ``kind``
    (``stake``, ``double``, ``split``, ``insurance``, ``follow_double``, ``follow_split``),
    ``wallet`` (the player's journal wallet), ``amount`` (> 0), ``round_ref``, ``table_ref``,
    ``bets`` (bet ids known so far); ``claim``: what a stake debit holds for its bet while it is
    live (``claims``: the bet's position), "" for none."""

    key: str
    kind: str
    wallet: object
    amount: Decimal
    round_ref: str = ""
    table_ref: str = ""
    bets: tuple = ()
    claim: str = ""


def open_debits(debits):
    """Record ``debits`` (``Debit`` of seamless players) as PENDING movements, in the caller's
    transaction, to be sent by ``send_debits`` once it commits; a key recorded before keeps its
    movement. Returns ``{key: WalletMovement}``."""
    return seamless.open_debits(debits)


def claims(round_ref, players):
    """``{(player id, claim): debit key}`` of the live stake debits of ``players`` (player ids; None:
    every player's) for ``round_ref`` that hold a claim (``Debit.claim``): recorded and not
    answered yet, or answered OK with neither their posting (``take``) nor a rollback
    (``drop_debits``). Read under the players' wallets' locks (or the table's seats' locks, for
    every player's seat claims), a debit recorded by a transaction committed before is among them."""
    return seamless.claims(round_ref, players)


def send_debits(movements):
    """Send the PENDING debit movements among ``movements`` (``WalletMovement``) to their operators'
    wallets, at once, outside any transaction; record each answer. A debit whose outcome is unknown
    becomes UNKNOWN and its rollback is queued (never a second debit). Returns ``{key:
    WalletMovement}`` as they stand after."""
    return seamless.send_debits(movements)


@dataclass(frozen=True)
class Take:
    """A stake taken in the ledger: ``key`` (``stake:<bet>``, ``double:<bet>``...), the player's
    ``wallet``, the table's ``house``, ``amount``; for a seamless player ``debit``: the key of the
    debit movement (answered OK) it stands for."""

    key: str
    wallet: object
    house: object
    amount: Decimal
    debit: str | None = None


def take(takes):
    """Post ``takes`` (``Take``) as stakes, in the caller's transaction: a transfer player's checked
    (``InsufficientFunds``), a seamless player's on its journal (the operator took the money), its
    debit movement then standing for the posting."""
    post([_posting(t.key, Kind.STAKE, t.wallet, t.house, t.amount, False) for t in takes], transactions=False)
    seamless.confirm_debits({t.debit: t.key for t in takes if t.debit})


def drop_debits(movements, *, now=False):
    """Roll back, in a transaction of its own, each debit movement of ``movements`` (as
    ``send_debits`` returned them) answered OK that stands for no ledger posting: its bet or extra
    stake was not placed after all, whatever the reason (the round closed, a concurrent bet took
    the seat, the placing raised, a shared mirror replaced it). Called once placing is over,
    committed or not; delivered after commit, or before it returns when ``now`` (the money it
    frees is staked next)."""
    players = seamless.drop_unkept([m.key for m in movements if m.state == m.State.OK])
    if now and players:
        seamless.deliver(players)


def retry(movement_id):
    """A supervisor's retry of the seamless movement ``movement_id`` (``wallets.outbox.retry``: a
    FAILED credit, rollback or correction is PENDING again, a failing one waiting for its backoff
    is due, both now), in the caller's transaction; delivered once it commits. Returns ``(the
    movement, its state before)``; raises ``wallets.exceptions.NotRetryable``, changing nothing."""
    return seamless.retry(movement_id)
