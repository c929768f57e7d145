"""The errors of bets (RULES 4, 6, 8, 9). Each carries a stable machine-readable ``code`` (see
``tables.exceptions.ServiceError``); nothing is written when a service raises one."""

from accounts.exceptions import InsufficientFunds
from tables.exceptions import ServiceError


class WageringError(ServiceError):
    """Base of the bet errors."""

    code = "wagering_error"


class BettingClosed(WageringError):
    """A bet on a round that is not OPEN (RULES 9: nobody joins mid-round)."""

    code = "betting_closed"
    status = 409


class LimitExceeded(WageringError):
    """A stake below the table minimum, above its maximum, or not a multiple of the chip step."""

    code = "limit_exceeded"


class BetStacked(WageringError):
    """A second bet of one player on the same position (seat, or the shared hand) and bet type in
    one round: the table's limits apply per player, per position and bet type, per round
    (RULES 6, 7, 8), and a player plays one hand (RULES 7, 9)."""

    code = "bet_stacked"
    status = 409


class SeatTaken(WageringError):
    """The seat is occupied by another player, or already has a seat bet this round (RULES 9)."""

    code = "seat_taken"
    status = 409


class SeatNotAllowed(WageringError):
    """The player may not hold this seat (trial / play-for-fun account, seat limit of the variant,
    unequal stakes on two premium seats, no such seat, a seat bet on an empty seat...) (RULES 9)."""

    code = "seat_not_allowed"


class BehindOwnSeat(WageringError):
    """A seated player betting behind their own seat (premium) or at all (classic) (RULES 6)."""

    code = "behind_own_seat"


class SideBetUnavailable(WageringError):
    """A bet type the table's variant does not offer, or a side bet past its last shoe round (RULES 8)."""

    code = "side_bet_unavailable"


class InvalidExtra(WageringError):
    """An extra stake that does not fit the bet (double on a side bet, a second split...) (RULES 4, 6)."""

    code = "invalid_extra"


class WalletRefused(WageringError):
    """A seamless operator's wallet did not take a stake or an extra stake (other than for funds:
    that is ``InsufficientFunds``); nothing is placed or taken."""


class WalletUnavailable(WalletRefused):
    """A seamless operator's wallet did not answer a stake's debit (or its answer is unknown): the
    bet is not placed and the debit is rolled back; never debited twice (docs/wallet-api.md)."""

    code = "wallet_unavailable"
    status = 409


class PlayerBlocked(WalletRefused):
    """The operator's wallet refused the stake: the player is blocked (self-exclusion...)."""

    code = "player_blocked"
    status = 403


class OperatorLimitExceeded(WalletRefused):
    """The operator's wallet refused the stake: a responsible-gaming limit of the player's."""

    code = "limit_exceeded"


def wallet_refusal(status):
    """The error of a seamless stake (or extra stake) whose debit the operator's wallet answered
    ``status`` (not OK; "" when it did not answer, or its answer is unknown)."""
    if status == "INSUFFICIENT_FUNDS":
        return InsufficientFunds("the player's wallet at the operator cannot cover the stake")
    if status == "PLAYER_BLOCKED":
        return PlayerBlocked("the operator's wallet refused the stake: the player is blocked")
    if status == "LIMIT_EXCEEDED":
        return OperatorLimitExceeded("the operator's wallet refused the stake: a limit of the player's")
    return WalletUnavailable("the operator's wallet did not confirm the stake: it is not placed (and is rolled back)")
