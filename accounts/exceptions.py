"""Named errors of the ledger. Each carries a stable machine-readable ``code`` for the APIs."""


class LedgerError(Exception):
    """Base of every ledger error; nothing was written when one is raised."""

    code = "ledger_error"


class InvalidAmount(LedgerError, ValueError):
    """An amount that is a float, not a number, not positive, or finer than the currency's minor unit."""

    code = "invalid_amount"


class InsufficientFunds(LedgerError):
    """A player wallet would go below zero."""

    code = "insufficient_funds"


class CurrencyMismatch(LedgerError):
    """The accounts of one transaction are in different currencies (real and play-for-fun money
    never meet, RULES 9)."""

    code = "currency_mismatch"


class IdempotencyConflict(LedgerError):
    """The idempotency key was already used for a different movement of money."""

    code = "idempotency_conflict"
