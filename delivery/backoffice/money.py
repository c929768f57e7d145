"""Money as the operator site shows it: US format (``1,234.00``, RULES.md 10) with the currency's
own minor units, never the database's 4 storage decimals. ONE helper for every admin column,
read-only field and template (the ``money`` template filter of ``backoffice_money``)."""

from decimal import Decimal, InvalidOperation

#: Used when the currency is unknown.
DEFAULT_MINOR_UNITS = 2


def minor_units_of(currency_or_minor_units):
    """The minor units of a ``Currency`` (or anything with ``minor_units``), an int, or None (2).
    A bare currency code is looked up once per process (``Currency`` rows never change units)."""
    c = currency_or_minor_units
    if c is None or c == "":
        return DEFAULT_MINOR_UNITS
    if isinstance(c, int):
        return c
    if hasattr(c, "minor_units"):
        return c.minor_units
    return _units_by_code(str(c))


_UNITS = {}


def _units_by_code(code):
    if code not in _UNITS:
        from accounts.models import Currency

        units = Currency.objects.filter(code=code).values_list("minor_units", flat=True).first()
        if units is None:
            return DEFAULT_MINOR_UNITS
        _UNITS[code] = units
    return _UNITS[code]


def format_money(amount, currency_or_minor_units=None, *, code=False):
    """``amount`` (Decimal, int, str) as ``"1,234.00"`` with the currency's minor units; ``code=True``
    appends the currency code (``"1,234.00 EUR"``) when a currency (or code) was given. ``None`` or
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
        text += f" {getattr(currency_or_minor_units, 'code', currency_or_minor_units)}"
    return text
