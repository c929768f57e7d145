"""The query strings the operator site refuses before any page reads them: a value no database
column can hold or no date can have would reach a query and fail there (a 500)."""

import re

#: The date-part lookups of Django's admin filters and date hierarchy (``opened_at__year=2026``).
DATE_PARTS = ("year", "iso_year", "quarter", "month", "week", "week_day", "iso_week_day", "day",
              "hour", "minute", "second")
_DATE_PART = re.compile(r"__(?:" + "|".join(DATE_PARTS) + ")$")
_SMALL_NUMBER = re.compile(r"[0-9]{1,4}")


def refused_query(query):
    """The sentence saying why ``query`` (a request's ``GET``, a ``QueryDict``) is refused, or None:
    a parameter's name or value holding a NUL character (no database column holds one), or a
    date-part lookup (``DATE_PARTS``: ``…__year``, ``…__month``…) whose value is not a number of 1
    to 4 digits."""
    for key, values in query.lists():
        if "\x00" in key or any("\x00" in value for value in values):
            return "A query parameter holds a NUL character: remove it from the address."
        if _DATE_PART.search(key) and not all(_SMALL_NUMBER.fullmatch(value) for value in values):
            return f"{key[:64]}: a date part is a number of 1 to 4 digits."
    return None
