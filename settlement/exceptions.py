"""Named errors of settlement and disputes. They extend ``tables.exceptions.ServiceError`` so the
APIs map them the same way (stable ``code``, HTTP ``status``); nothing is written when one is raised.
``IllegalTransition`` and ``NotFound`` are wagering's own."""

from tables.exceptions import ServiceError


class ReasonRequired(ServiceError):
    """An operator action without a reason (ARCHITECTURE: every operator action says why)."""

    code = "reason_required"


class DisputeError(ServiceError):
    """Base of the dispute errors."""

    code = "dispute_error"


class NoBets(DisputeError):
    """A dispute must name at least one bet."""

    code = "dispute_no_bets"


class NotOwnBets(DisputeError):
    """A player may only dispute their own bets."""

    code = "dispute_not_own_bets"
    status = 403


class AlreadyDisputed(DisputeError):
    """A bet named in a dispute that is still open or under investigation."""

    code = "dispute_exists"
    status = 409


class MixedCurrencies(DisputeError):
    """The bets of one dispute must be in one currency (its adjustment is one ledger posting)."""

    code = "dispute_mixed_currencies"


class AdjustmentNotAllowed(DisputeError):
    """An adjustment on a rejected dispute, or a second decision that differs from the first."""

    code = "dispute_adjustment_not_allowed"
    status = 409
