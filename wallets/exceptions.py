"""Named errors of the wallet port's services. They extend ``accounts.exceptions.PlatformError``
(a stable ``code``, an HTTP ``status``); nothing is written when one is raised."""

from accounts.exceptions import PlatformError


class WalletError(PlatformError):
    """Base of the wallet port's errors."""

    code = "wallet_error"


class NotRetryable(WalletError):
    """A movement that cannot be sent again now (``wallets.outbox.retry``): unknown, not the
    outbox's (a stake debit is sent once, never again), answered for good (acknowledged, refused,
    unknown), not failing (it waits for its turn), or being sent at this moment."""

    code = "movement_not_retryable"
    status = 409
