"""Money values: ``Decimal`` in a currency's major units with at most its ``minor_units`` decimals.

Amounts are validated here, never rounded: the one rounding rule of the platform (round DOWN to the
minor unit, RULES 4 and 5) is the rules engine's, where payouts are computed; the ledger knows no
game and takes amounts as they come.
"""

import re
from decimal import Decimal, InvalidOperation
from functools import cache

from .exceptions import InvalidAmount

#: A decimal string as the APIs take it: no sign (but ``-`` where negatives are allowed), no
#: whitespace, no exponent, no leading zeros, digits after the point only if there is one.
AMOUNT_STRING = re.compile(r"-?(0|[1-9][0-9]*)(\.([0-9]+))?")

#: The platform's one bound on money, in major units: every amount and every balance is below it in
#: absolute value (at most 99,999,999,999.9999). The money columns keep 4 decimals, and SQLite (the
#: zero-setup default) stores them as 8-byte floats, exact to 15 significant digits: 11 integer
#: digits and 4 decimals. ``parse_amount`` refuses an amount reaching it, the ledger a posting that
#: would bring a wallet's balance to it (``accounts.exceptions.BalanceLimit``).
MONEY_LIMIT = Decimal(10) ** 11
#: The most a transfer in may bring a wallet to (below it): a tenth of ``MONEY_LIMIT``, so that the
#: payouts and refunds of the rounds a player is in always fit below ``MONEY_LIMIT`` (a payout
#: refused there would hold the whole round's settlement, every other player's too).
TRANSFER_BALANCE_LIMIT = MONEY_LIMIT / 10


def _shown(value):
    """``value`` for an error message: a plain, short string (never a ``Decimal('...')`` repr)."""
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def parse_amount(value, minor_units, *, allow_zero=False, allow_negative=False):
    """Return ``value`` as a ``Decimal`` quantised to ``minor_units`` decimals.

    ``value``: a ``Decimal``, an ``int`` (internal callers) or a decimal string such as ``"12.35"``
    (``AMOUNT_STRING``: no whitespace, exponent, ``+`` or leading zeros, and at most ``minor_units``
    decimals even if they are zeros: ``"5.000"`` is not a EUR amount). Floats (and bools) are
    rejected: ``0.1 + 0.2`` is not money. Raises ``InvalidAmount`` when the value is not a finite
    number, has more decimals than the currency's minor unit, is too large (``MONEY_LIMIT`` or more
    in absolute value), is zero (unless ``allow_zero``) or is negative (unless ``allow_negative``).
    """
    if isinstance(value, (float, bool)) or not isinstance(value, (Decimal, int, str)):
        raise InvalidAmount(f"amount must be a decimal string or Decimal, not {type(value).__name__}")
    if isinstance(value, str):
        match = AMOUNT_STRING.fullmatch(value) if len(value) <= 64 else None
        if match is None:
            raise InvalidAmount(f"amount {_shown(value)!r} is not a decimal string such as \"12.50\"")
        if len(match.group(3) or "") > minor_units:
            raise InvalidAmount(f"amount {value} has more than {minor_units} decimals")
    try:
        amount = Decimal(value)
    except (InvalidOperation, ValueError):
        raise InvalidAmount(f"amount {_shown(value)!r} is not a number") from None
    if not amount.is_finite():
        raise InvalidAmount(f"amount {_shown(value)} is not a finite number")
    if abs(amount) >= MONEY_LIMIT:  # before quantize, which fails on huge values
        raise InvalidAmount(f"amount {_shown(value)} is too large")
    step = _quantum(minor_units)
    if amount != amount.quantize(step, rounding="ROUND_DOWN"):
        raise InvalidAmount(f"amount {_shown(value)} has more than {minor_units} decimals")
    if amount == 0 and not allow_zero:
        raise InvalidAmount("amount must not be zero")
    if amount < 0 and not allow_negative:
        raise InvalidAmount(f"amount {_shown(value)} must be positive")
    return amount.quantize(step)


def amount_string(amount, minor_units):
    """``amount`` (``Decimal`` in major units, or None) as the platform shows money: a decimal
    string with exactly ``minor_units`` decimals (``"12.50"``), in every answer and message; None
    stays None."""
    return None if amount is None else str(Decimal(amount).quantize(_quantum(minor_units)))


@cache
def _quantum(minor_units):
    return Decimal(1).scaleb(-minor_units)
