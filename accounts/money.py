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

#: The largest amount: 10**15 (the database's money columns hold 15 integer digits at most).
MAX_ADJUSTED = 14


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
    number, has more decimals than the currency's minor unit, is too large, is zero (unless
    ``allow_zero``) or is negative (unless ``allow_negative``).
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
    if amount and amount.adjusted() > MAX_ADJUSTED:  # before quantize, which fails on huge values
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
