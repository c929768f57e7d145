"""The errors of bets (RULES 4, 6, 8, 9). Each carries a stable machine-readable ``code`` (see
``tables.exceptions.ServiceError``); nothing is written when a service raises one."""

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
