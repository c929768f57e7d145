"""Money helpers: amounts are ``Decimal`` in the currency's major units with ``minor_units``
decimals ("12.35" EUR). Never float. The one rounding rule: DOWN to the minor unit
(RULES 4 half amounts, RULES 5 winnings, both [decision])."""
from __future__ import annotations

import re
from decimal import ROUND_DOWN, Decimal
from functools import lru_cache

_STAKE_RE = re.compile(r"^(?:0|[1-9][0-9]*)(?:\.([0-9]+))?$")


@lru_cache(maxsize=16)
def quantum(minor_units: int) -> Decimal:
    """The minor unit as a Decimal: 2 -> ``Decimal("0.01")``, 0 -> ``Decimal("1")``."""
    return Decimal(1).scaleb(-minor_units)


def round_down(amount: Decimal, minor_units: int = 2) -> Decimal:
    """Round DOWN (toward zero) to the minor unit and quantize: ``0.375`` -> ``0.37``."""
    return amount.quantize(quantum(minor_units), rounding=ROUND_DOWN)


def parse_stake(value: object, minor_units: int = 2) -> Decimal:
    """Parse a stake given as a decimal STRING (``"10.00"``, ``"5"``); return it quantized.

    Raises ``ValueError`` (reason) if it is not a string, not a plain positive decimal, has more
    decimals than the currency's minor units, or is zero (docs/round-record.md "Invalid records").
    """
    if not isinstance(value, str):
        raise ValueError(f"stake must be a decimal string, got {type(value).__name__} {value!r}")
    m = _STAKE_RE.match(value)
    if m is None:
        raise ValueError(f"stake {value!r} is not a plain decimal amount")
    frac = m.group(1)
    if frac is not None and len(frac.rstrip("0")) > minor_units:
        raise ValueError(f"stake {value!r} is not a whole number of minor units ({minor_units} decimals)")
    d = Decimal(value)
    if d <= 0:
        raise ValueError(f"stake {value!r} is not positive")
    return d.quantize(quantum(minor_units))


def fmt(amount: Decimal | None) -> str | None:
    """Money as a decimal string for JSON (``Decimal("20.00")`` -> ``"20.00"``)."""
    return None if amount is None else str(amount)
