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
from django.core.cache import cache
from django.utils import timezone

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


#: Why a balance is unknown while another request is asking the operator's wallet for it.
BEING_ASKED = "the operator's wallet is being asked for this balance; ask again in a moment"


def _kept(wallet):
    return f"wallets:balance:{wallet.pk}"


def _asking(wallet):
    return f"wallets:balance:{wallet.pk}:asking"


def ask_balances(wallets):
    """``{wallet pk: OperatorBalance}`` of ``wallets`` (journal wallets: seamless players'), one
    ``balance`` call each through ``wallets.client.send_many``, an operator's all at once, each
    waiting at most ``WALLET_BALANCE_TIMEOUT_MS`` (the operator's ``wallet_timeout_ms`` when
    shorter): a page waits one short timeout at most per operator. A wallet's answer, known or
    not, is kept ``WALLET_BALANCE_CACHE_SECONDS`` in the default cache and answered again
    meanwhile; while one request asks for a wallet's balance, another is answered at once with
    the balance unknown (``BEING_ASKED``): one call at most per wallet at a time and per interval."""
    asked, by_operator = {}, defaultdict(list)
    for wallet in wallets:
        kept = cache.get(_kept(wallet))
        if kept is not None:
            asked[wallet.pk] = OperatorBalance(wallet.operator, wallet.currency, *kept)
        elif cache.add(_asking(wallet), True, settings.WALLET_BALANCE_TIMEOUT_MS // 1000 + 2):
            by_operator[wallet.operator_id].append(wallet)
        else:
            asked[wallet.pk] = OperatorBalance(wallet.operator, wallet.currency, timezone.now(), unknown=BEING_ASKED)
    for group in by_operator.values():
        operator = copy.copy(group[0].operator)  # the operator's wallet, asked with the short timeout
        operator.wallet_timeout_ms = min(settings.WALLET_BALANCE_TIMEOUT_MS, operator.wallet_timeout_ms)
        answers = client.send_many(operator, [("balance", {"player": w.player.code, "currency": w.currency.code})
                                              for w in group])
        for wallet, answer in zip(group, answers):
            amount, unknown = _read(answer, wallet.currency)
            asked[wallet.pk] = OperatorBalance(wallet.operator, wallet.currency, answer.sent_at, amount, unknown)
            cache.set(_kept(wallet), (answer.sent_at, amount, unknown), settings.WALLET_BALANCE_CACHE_SECONDS)
            cache.delete(_asking(wallet))
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
