"""Row locks of the ledger's rows, in the platform's one lock order (docs/architecture.md, "Locks"):
an operator row (0th: before anything else; only its players' creation takes it), a player row
(5th), then wallets (7th and last, each set in primary-key order). ``accounts.services.post`` takes
the wallet locks itself, in the same order."""

from django.db import connection

from . import pg
from .models import Operator, Player
from .selectors import wallets_in


def lock_operator(operator_id):
    """Lock operator ``operator_id``'s row (``FOR UPDATE``): one writer of its players at a time."""
    Operator.objects.select_for_update().filter(pk=operator_id).exists()


def lock_player(player_id):
    """Lock player ``player_id``'s row (``FOR UPDATE``): one writer at a time of what hangs on the
    player (opening a dispute). Returns True if the player exists."""
    return Player.objects.select_for_update().filter(pk=player_id).exists()


def lock_wallets(players, currency):
    """``{player_id: wallet Account}`` of ``players`` (a set of player ids) in ``currency`` (a
    ``Currency``), locked ``FOR UPDATE`` in primary-key order."""
    return {w.player_id: w for w in
            wallets_in(currency).select_for_update(of=("self",)).order_by("pk").filter(player__in=players)}


def lock_wallets_by_code(currency, codes):
    """The wallets in ``currency`` (a ``Currency``) of the players whose game code
    (``Player.game_code``, as the game server names them) is in ``codes`` (a set of str), locked
    ``FOR UPDATE`` in primary-key order, each with its ``player`` loaded. Returns a list of
    ``Account`` (on PostgreSQL one statement, ``pg.lock_wallets_by_code``)."""
    if connection.vendor == "postgresql":
        return pg.lock_wallets_by_code(currency, codes)
    return list(wallets_in(currency).select_for_update(of=("self",)).order_by("pk")
                .filter(player__game_code__in=codes).select_related("player"))
