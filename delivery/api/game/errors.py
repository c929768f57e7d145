"""The game-server API's error bodies: ``delivery.api.common``'s, except that a refusal for lack
of funds never tells the game server a player's balance (one sentence, whatever the ledger said)."""

from accounts.exceptions import InsufficientFunds
from delivery.api.common import error_body
from delivery.api.common import exception_handler as common_exception_handler

FUNDS = "the player's wallet cannot cover the stake"


def game_error_body(exc):
    """``{"code", "detail"[, "field"]}`` of a ``PlatformError`` for the game server."""
    if isinstance(exc, InsufficientFunds):
        return {"code": exc.code, "detail": FUNDS}
    return error_body(exc)


def exception_handler(exc, context):
    """``delivery.api.common.exception_handler`` with ``game_error_body``'s wording."""
    response = common_exception_handler(exc, context)
    if isinstance(exc, InsufficientFunds):
        response.data = game_error_body(exc)
    return response
