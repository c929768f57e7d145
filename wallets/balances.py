"""A seamless player's balance as its operator's wallet keeps it, for the operator pages and the
player API: the protocol's ``balance`` call (docs/wallet-api.md section 3). The platform's journal wallet of such a
player holds the net of what the platform moved, not the player's money; the operator's answer
does. Asking never raises for the network or the answer: a balance the wallet did not give says
why."""

import copy
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.conf import settings

from accounts.exceptions import InvalidAmount
from accounts.money import parse_amount

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
    try:  # a money string of the currency, within the money columns (a negative one too: the operator's)
        return parse_amount(answer.body.get("balance"), currency.minor_units, allow_zero=True, allow_negative=True), ""
    except InvalidAmount:
        return None, f"the operator's wallet answered no {currency.code} balance: {answer.body.get('balance')!r}"


def ask_balances(wallets):
    """``{wallet pk: OperatorBalance}`` of ``wallets`` (journal wallets: seamless players'), one
    ``balance`` call each through ``wallets.client.send_many``, an operator's all at once, each
    waiting at most ``WALLET_BALANCE_TIMEOUT_MS`` (the operator's ``wallet_timeout_ms`` when
    shorter): a page waits one short timeout at most per operator."""
    by_operator = defaultdict(list)
    for wallet in wallets:
        by_operator[wallet.operator_id].append(wallet)
    asked = {}
    for group in by_operator.values():
        operator = copy.copy(group[0].operator)  # the operator's wallet, asked with the short timeout
        operator.wallet_timeout_ms = min(settings.WALLET_BALANCE_TIMEOUT_MS, operator.wallet_timeout_ms)
        answers = client.send_many(operator, [("balance", {"player": w.player.code, "currency": w.currency.code})
                                              for w in group])
        for wallet, answer in zip(group, answers):
            amount, unknown = _read(answer, wallet.currency)
            asked[wallet.pk] = OperatorBalance(wallet.operator, wallet.currency, answer.sent_at, amount, unknown)
    return asked


def ask_balance(wallet):
    """The ``OperatorBalance`` of one journal ``wallet`` (``ask_balances``)."""
    return ask_balances([wallet])[wallet.pk]


def with_operator_balances(wallets):
    """``wallets`` (a list of ``Account``), each journal wallet's ``operator_balance`` set: its
    player's balance as the operator's wallet answers it now (``ask_balances``); the others are
    left as they are. Returns ``wallets``."""
    asked = ask_balances([w for w in wallets if w.journal])
    for wallet in wallets:
        if wallet.pk in asked:
            wallet.operator_balance = asked[wallet.pk]
    return wallets
