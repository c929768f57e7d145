"""Money as the operator site shows it: US format (``1,234.00``, RULES 10) with the currency's own
minor units, never the database's 4 storage decimals. ONE helper for every admin column, read-only
field and template (the ``money`` filters of ``{% load money_format %}``)."""

from decimal import Decimal, InvalidOperation

#: Used when the currency is unknown.
DEFAULT_MINOR_UNITS = 2


def minor_units_of(currency_or_minor_units):
    """The minor units of a ``Currency`` (or anything with ``minor_units``), an int, or None (2)."""
    c = currency_or_minor_units
    if c is None or c == "":
        return DEFAULT_MINOR_UNITS
    if isinstance(c, int):
        return c
    return c.minor_units


def format_money(amount, currency_or_minor_units=None, *, code=False):
    """``amount`` (Decimal, int, str) as ``"1,234.00"`` with the currency's minor units; ``code=True``
    appends the currency code (``"1,234.00 EUR"``) when a currency was given. ``None`` or
    ``""`` gives ``""``; a value that is not a number is returned as text."""
    if amount is None or amount == "":
        return ""
    try:
        value = amount if isinstance(amount, Decimal) else Decimal(str(amount))
    except (InvalidOperation, ValueError):
        return str(amount)
    if not value.is_finite():
        return str(amount)
    units = minor_units_of(currency_or_minor_units)
    text = f"{value.quantize(Decimal(1).scaleb(-units)):,.{units}f}"
    if code and currency_or_minor_units is not None and not isinstance(currency_or_minor_units, int):
        text += f" {currency_or_minor_units.code}"
    return text
