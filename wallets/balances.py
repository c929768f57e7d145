"""A seamless player's balance as its operator's wallet keeps it, for the operator pages: the
protocol's ``balance`` call (docs/wallet-api.md section 3). The platform's journal wallet of such a
player holds the net of what the platform moved, not the player's money; the operator's answer
does. Asking never raises: a balance the wallet did not give says why."""

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

import httpx
from django.conf import settings
from django.utils import timezone

from . import client


@dataclass(frozen=True)
class OperatorBalance:
    """What ``operator``'s wallet (an ``Operator``) answered, asked at ``asked_at``, for a player's
    balance in ``currency`` (a ``Currency``): ``amount`` (a ``Decimal`` in its major units), or
    None and ``unknown``, why (``"the operator's wallet did not answer: HTTP 503"``)."""

    operator: object
    currency: object
    asked_at: datetime
    amount: Decimal | None = None
    unknown: str = ""


def _read(answer, currency):
    """``(amount, why unknown)`` of the ``client.Answer`` of a balance call in ``currency``."""
    if answer.outcome != "ok":
        return None, f"the operator's wallet did not answer: {answer.error or answer.status}"
    amount = answer.balance
    if amount is None or not amount.is_finite() or amount.as_tuple().exponent < -currency.minor_units:
        return None, f"the operator's wallet answered no {currency.code} balance: {answer.body.get('balance')!r}"
    return amount, ""


def ask_balances(wallets):
    """``{wallet pk: OperatorBalance}`` of ``wallets`` (journal wallets: seamless players'), one
    ``balance`` call each through ``wallets.client``, each waiting at most
    ``WALLET_BALANCE_TIMEOUT_MS`` (the operator's ``wallet_timeout_ms`` when shorter). Once an
    operator's wallet gives no answer at all (a timeout, a connection refused), its other wallets
    are not asked and carry the same reason: a page waits for one timeout at most per operator."""
    asked, silent = {}, {}
    if not wallets:
        return asked
    with httpx.Client() as http:
        for wallet in wallets:
            operator, currency = wallet.operator, wallet.currency
            at = timezone.now()
            if operator.pk in silent:
                asked[wallet.pk] = OperatorBalance(operator, currency, at, unknown=silent[operator.pk])
                continue
            answer = client.send(http, operator, "balance", {"player": wallet.player.code, "currency": currency.code},
                                 timeout_ms=min(settings.WALLET_BALANCE_TIMEOUT_MS, operator.wallet_timeout_ms))
            amount, unknown = _read(answer, currency)
            asked[wallet.pk] = OperatorBalance(operator, currency, answer.sent_at, amount, unknown)
            if answer.http_status is None:
                silent[operator.pk] = unknown
    return asked


def ask_balance(wallet):
    """The ``OperatorBalance`` of one journal ``wallet`` (``ask_balances``)."""
    return ask_balances([wallet])[wallet.pk]
