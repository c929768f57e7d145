"""Money values: ``Decimal`` in a currency's major units with at most its ``minor_units`` decimals.

Amounts are validated here, never rounded: the one rounding rule of the platform (round DOWN to the
minor unit, RULES.md 4 and 5) lives in the rules engine (``tables.engine``), where payouts are computed.
"""

from decimal import Decimal, InvalidOperation

from .exceptions import InvalidAmount


def parse_amount(value, minor_units, *, allow_zero=False, allow_negative=False):
    """Return ``value`` as a ``Decimal`` quantised to ``minor_units`` decimals.

    ``value``: a ``Decimal``, an ``int`` or a decimal string such as ``"12.35"``. Floats (and bools)
    are rejected: ``0.1 + 0.2`` is not money. Raises ``InvalidAmount`` when the value is not a finite
    number, has more decimals than the currency's minor unit, is zero (unless ``allow_zero``) or is
    negative (unless ``allow_negative``).
    """
    if isinstance(value, (float, bool)) or not isinstance(value, (Decimal, int, str)):
        raise InvalidAmount(f"amount must be a decimal string or Decimal, not {type(value).__name__}")
    try:
        amount = Decimal(value.strip() if isinstance(value, str) else value)
    except (InvalidOperation, ValueError):
        raise InvalidAmount(f"amount {value!r} is not a number") from None
    if not amount.is_finite():
        raise InvalidAmount(f"amount {value!r} is not a finite number")
    quantum = Decimal(1).scaleb(-minor_units)
    if amount != amount.quantize(quantum, rounding="ROUND_DOWN"):
        raise InvalidAmount(f"amount {value!r} has more than {minor_units} decimals")
    if amount.adjusted() > 14:
        raise InvalidAmount(f"amount {value!r} is too large")
    if amount == 0 and not allow_zero:
        raise InvalidAmount("amount must not be zero")
    if amount < 0 and not allow_negative:
        raise InvalidAmount(f"amount {value!r} must be positive")
    return amount.quantize(quantum)
