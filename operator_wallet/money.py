"""Money as the protocol writes it: ``Decimal`` amounts in a currency's major units, on the wire
as strings with exactly the currency's minor-unit decimals (``"12.50"`` in EUR, ``"1250"`` in a
currency without minor units). Never a float."""

import re
from decimal import Decimal, InvalidOperation


class Currencies:
    """The currencies a wallet keeps: ``{code: minor units}``, e.g. ``{"EUR": 2}``.

    Raises ``ValueError`` on an empty mapping or minor units outside 0..8."""

    def __init__(self, units):
        if not units:
            raise ValueError("no currency")
        for code, digits in units.items():
            if not code or not isinstance(digits, int) or not 0 <= digits <= 8:
                raise ValueError(f"{code!r}: minor units must be 0..8")
        self.units = dict(units)
        self._pattern = {code: re.compile(r"(0|[1-9][0-9]*)" + (rf"\.[0-9]{{{n}}}" if n else ""))
                         for code, n in units.items()}
        self._exponent = {code: Decimal(1).scaleb(-n) for code, n in units.items()}

    @classmethod
    def parse(cls, text):
        """``"EUR=2,USD=2,FUN=2"`` -> ``Currencies``; ``ValueError`` when malformed."""
        units = {}
        for item in text.split(","):
            code, sep, digits = item.strip().partition("=")
            if not sep or not digits.strip().isdigit():
                raise ValueError(f"{item!r}: expected CODE=MINOR_UNITS")
            units[code.strip()] = int(digits)
        return cls(units)

    def __contains__(self, code):
        return code in self.units

    def amount(self, code, text):
        """The ``Decimal`` written ``text`` in ``code``: a string of ASCII digits, no sign, no
        leading zero, exactly the currency's minor-unit decimals. ``ValueError`` otherwise."""
        if not isinstance(text, str) or not self._pattern[code].fullmatch(text):
            raise ValueError(f"amount {text!r}: expected a string with exactly {self.units[code]} decimals in {code}")
        return Decimal(text)

    def exact(self, code, value):
        """``value`` (a ``Decimal``, ``int`` or numeric string) held to ``code``'s minor units;
        ``ValueError`` when it is negative, not a number or has more decimals than the currency."""
        try:
            value = Decimal(value)
            held = value.quantize(self._exponent[code])
        except InvalidOperation:
            raise ValueError(f"{value!r} is not an amount in {code}") from None
        if held != value or held < 0:
            raise ValueError(f"{value} is not a non-negative amount in {code}")
        return held

    def text(self, code, amount):
        """``amount`` as the protocol writes it in ``code`` (``Decimal("12.5")`` -> ``"12.50"``)."""
        return f"{amount:.{self.units[code]}f}"
