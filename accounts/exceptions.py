"""Named errors of the ledger and of operators' players and sessions, and the root of every named
error of the platform (``PlatformError``). Each carries a stable machine-readable ``code`` and the
HTTP ``status`` the APIs answer with; nothing was written when one is raised."""


class PlatformError(Exception):
    """Root of the platform's named errors: ``code`` (stable), ``status`` (HTTP), ``detail`` (a
    sentence), ``extra`` (machine-readable details the APIs add to the answer)."""

    code = "error"
    status = 400

    def __init__(self, detail, **extra):
        super().__init__(detail)
        self.detail = detail
        self.extra = extra


class LedgerError(PlatformError):
    """Base of every ledger error."""

    code = "ledger_error"


class InvalidAmount(LedgerError, ValueError):
    """An amount that is a float, not a number, not positive, or finer than the currency's minor unit."""

    code = "invalid_amount"


class InsufficientFunds(LedgerError):
    """A player wallet would go below zero."""

    code = "insufficient_funds"
    status = 409


class BalanceLimit(LedgerError):
    """A posting would bring a wallet's balance to ``accounts.money.MONEY_LIMIT`` or beyond (either
    sign): the platform holds no larger balance exactly."""

    code = "balance_limit"
    status = 409


class CurrencyMismatch(LedgerError):
    """The accounts of one transaction are in different currencies (real and play-for-fun money
    never meet, RULES 9), or belong to different operators."""

    code = "currency_mismatch"


class IdempotencyConflict(LedgerError):
    """The idempotency key was already used for a different movement of money."""

    code = "idempotency_conflict"
    status = 409


class OperatorError(PlatformError):
    """Base of the errors of operators' players, sessions and transfers."""

    code = "operator_error"


class UnknownPlayer(OperatorError):
    """No such player at this operator (another operator's player is unknown too)."""

    code = "not_found"
    status = 404


class UnknownSession(OperatorError):
    """No such session of this operator's players."""

    code = "not_found"
    status = 404


class InvalidRequest(OperatorError):
    """A player code, account kind, display name, transfer id or direction the platform cannot take."""

    code = "invalid_input"


class CurrencyNotAllowed(OperatorError):
    """A currency the operator may not use, or the player holds no wallet in."""

    code = "currency_not_allowed"


class WalletKept(OperatorError):
    """A player's update whose currencies leave out one the player holds a wallet in (a wallet once
    opened stays)."""

    code = "wallet_kept"
    status = 409


class AccountKindInUse(OperatorError):
    """A real player made a trial one while a real wallet of theirs holds money or a bet of theirs
    is still open."""

    code = "account_kind_in_use"
    status = 409


class WrongWalletMode(OperatorError):
    """A transfer for an operator in seamless mode (its players' money stays in its own wallet)."""

    code = "wrong_wallet_mode"
    status = 409
