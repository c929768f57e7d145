"""Named errors of settlement and disputes. They extend ``tables.exceptions.ServiceError`` so the
APIs map them the same way (stable ``code``, HTTP ``status``); nothing is written when one is raised.
``IllegalTransition`` and ``NotFound`` are ``tables.exceptions``'s."""

from tables.exceptions import ServiceError


class ReasonRequired(ServiceError):
    """An operator action without a reason (docs/architecture.md: every operator action says why)."""

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


class AlreadyResettled(ServiceError):
    """A resettle confirmed after another correction of the same round was made (a double submit, or
    two operators at once): nothing changed."""

    code = "already_resettled"
    status = 409


class RecordUnchanged(ServiceError):
    """A resettle whose corrected record is the record the round is settled on: nothing would change."""

    code = "record_unchanged"
    status = 409


class BetsChanged(ServiceError):
    """A round's kept settlement names a bet that is no longer open: nothing is written (the
    round then fails its settlement, ``services.settle_round``)."""

    code = "bets_changed"
    status = 409


class AdjustmentLimitExceeded(DisputeError):
    """An adjustment beyond what the acting operator may make: a Dispute officer's limits (per
    adjustment, per day, per player per day: ``DISPUTE_OFFICER_*``), or any adjustment without an
    adjustment permission."""

    code = "adjustment_limit_exceeded"
    status = 403


class AdjustmentNeedsDispute(DisputeError):
    """A Dispute officer's adjustment names no dispute of the wallet's player in its currency."""

    code = "adjustment_needs_dispute"
    status = 409


class ApprovalRefused(DisputeError):
    """An approval of an adjustment by someone who may not give it: not a supervisor, or the
    supervisor who asked for it (a second supervisor approves)."""

    code = "adjustment_approval_refused"
    status = 403
