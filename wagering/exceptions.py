"""The errors of rounds and bets. Each carries a stable machine-readable ``code`` that the
game-server API returns as ``{"code": ..., "detail": ...}`` (``wagering.api.exception_handler``).

Nothing is written when a service raises one of these (the service's transaction rolls back).
The ledger's own errors (``accounts.exceptions``: ``insufficient_funds``, ``invalid_amount``,
``idempotency_conflict``, ``currency_mismatch``) are mapped the same way by their ``.code``.
"""


class WageringError(Exception):
    """Base of every round/bet error. ``code`` is stable; ``status`` is the HTTP status the API uses."""

    code = "wagering_error"
    status = 400

    def __init__(self, detail, **extra):
        super().__init__(detail)
        self.detail = detail
        self.extra = extra


class NotFound(WageringError):
    """An unknown table, round, bet or player."""

    code = "not_found"
    status = 404


class IllegalTransition(WageringError):
    """A round (or bet) state change the state machine does not allow (ARCHITECTURE: state machines)."""

    code = "illegal_transition"
    status = 409


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


class InvalidRecord(WageringError):
    """The round record is invalid or disagrees with the bets the platform holds. ``extra["field"]``
    is the record's field path (the engine's ``InvalidRecord.path``)."""

    code = "invalid_record"


class InvalidInput(WageringError):
    """A request body that is malformed (missing or mistyped fields)."""

    code = "invalid_input"
