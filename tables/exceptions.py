"""The errors of tables and rounds, and the base of every named error of the services above them
(bets, settlement, disputes). Each carries a stable machine-readable ``code`` that the APIs answer
as ``{"code": ..., "detail": ...}`` (``delivery.api.common.exception_handler``).

Nothing is written when a service raises one of these (the service's transaction rolls back).
The ledger's own errors (``accounts.exceptions``) are mapped the same way by their ``.code``.
"""

from accounts.exceptions import PlatformError


class ServiceError(PlatformError):
    """Base of the named errors of the game services (rounds, bets, settlement, disputes):
    ``accounts.exceptions.PlatformError``'s code, status, detail and extra."""

    code = "service_error"


class NotFound(ServiceError):
    """An unknown table, round, bet or player."""

    code = "not_found"
    status = 404


class IllegalTransition(ServiceError):
    """A round (or bet) state change the state machine does not allow (docs/architecture.md: state
    machines)."""

    code = "illegal_transition"
    status = 409


class InvalidInput(ServiceError):
    """A request body that is malformed (missing or mistyped fields)."""

    code = "invalid_input"



class InvalidRecord(ServiceError):
    """The round record is invalid or disagrees with the bets the platform holds. ``extra["field"]``
    is the record's field path (the engine's ``InvalidRecord.path``)."""

    code = "invalid_record"
