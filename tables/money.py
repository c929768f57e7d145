"""A round's money as the wallet port takes it: each movement of a bet's money between a player's
wallet and the table's house account of the player's operator, named per bet for the ledger and
per player and round for a seamless operator's wallet (``wallets.port.Move``)."""

from accounts.selectors import player_wallets
from wallets.port import Closing, Move

from .services import table_houses


def round_money(round_, players):
    """``(wallets, houses)`` of ``players`` (player ids) at ``round_``'s table: ``{player_id: wallet}``
    in its currency and ``{operator id: house account}``."""
    wallets = player_wallets(players, round_.table.currency)
    return wallets, table_houses(round_.table, wallets.values())


def group_key(group, round_id, player_id):
    """The key of a seamless player's movement ``group`` (``payout``, ``refund``, ``reverse``,
    ``resettle-<n>``) of round ``round_id``: ``<group>:<round>:<player>``, its ledger posting's key
    too (one per player and purpose: it carries all their bets' money of the round)."""
    return f"{group}:{round_id}:{player_id}"


def bet_move(round_, wallets, houses, *, key, group, kind, ledger_kind, player, amount, to_player=True, bet=None,
             memo=""):
    """The ``Move`` of ``amount`` (> 0) of ``round_``'s ``player`` (id) under ledger ``key``, one of the
    movements ``group_key(group, ...)`` of protocol ``kind`` (``payout``, ``refund``, ``resettle``,
    ``correction``) of a seamless operator's wallet."""
    wallet = wallets[player]
    return Move(key=key, group=group_key(group, round_.pk, player), kind=kind, ledger_kind=ledger_kind, wallet=wallet,
                house=houses[wallet.operator_id], amount=amount, to_player=to_player, bet=bet,
                round_ref=str(round_.pk), table_ref=round_.table.code, memo=memo)


def round_closing(round_, wallets, bets_of, *, group="payout"):
    """The ``Closing`` of ``round_`` for the players of ``wallets`` (``{player_id: wallet}`` in the
    table's currency, as ``round_money`` reads them): a seamless player with no ``group`` movement
    gets one of 0.00 (docs/wallet-api.md: the round is closed for them); ``bets_of``:
    ``{player_id: [bet ids]}``."""
    return Closing(wallets=wallets, group_of=lambda player: group_key(group, round_.pk, player), kind=group,
                   round_ref=str(round_.pk), table_ref=round_.table.code, bets_of=bets_of)
