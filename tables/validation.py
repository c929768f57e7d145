"""The check of JSON the platform stores as evidence (round records, timeline payloads): PostgreSQL
rejects NUL characters in ``text`` and ``jsonb``, so every string stored is checked here
(``invalid_input``): a NUL is a 400, never a database error. And ``unknown_keys``, what every
request body and batch item refuses beyond its call's keys."""

from .exceptions import InvalidInput

#: The deepest nesting a stored JSON value may have.
MAX_DEPTH = 32


def unknown_keys(data, fields):
    """The keys of ``data`` (a body's object) that are not in ``fields``: sorted, the first 10,
    each cut to 64 characters."""
    return sorted(str(key)[:64] for key in set(data) - set(fields))[:10]


def check_json(value, name="payload", depth=0, *, max_length=None):
    """Raise ``InvalidInput`` if ``value`` (decoded JSON to store in a ``jsonb``) holds a NUL
    character in any string (keys included), a string longer than ``max_length`` characters (if
    given), or is nested deeper than ``MAX_DEPTH``; the message names where, from ``name``
    (``name.key``, ``name[index]``, cut to 200 characters at each level; with ``name`` ``""``, from
    the top: ``bets[0].player``, and ``body`` for ``value`` itself)."""
    fault = _fault(value, depth, max_length)
    if fault is not None:
        path, message = fault
        for step in reversed(path):
            name = step.format(name)[:200]
        raise InvalidInput(f"{name.removeprefix('.') or 'body'}: {message}")


def _fault(value, depth, max_length):
    """None, or ``(path, message)``: the first fault of ``value`` and, innermost first, the steps to
    it (``"{}.key"``, ``"{}[index]"``; a key's own fault is its dict's). The place is named only
    when there is a fault: a round record holds tens of thousands of strings."""
    if depth > MAX_DEPTH:
        return [], "nested too deeply"
    if isinstance(value, str):
        if "\x00" in value:
            return [], "must not contain NUL characters"
        if max_length is not None and len(value) > max_length:
            return [], f"texts are at most {max_length} characters"
    elif isinstance(value, dict):
        for key, item in value.items():
            fault = _fault(key, depth + 1, max_length)
            if fault is None and (fault := _fault(item, depth + 1, max_length)) is not None:
                fault[0].append("{}." + str(key).replace("{", "{{").replace("}", "}}"))
            if fault is not None:
                return fault
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if (fault := _fault(item, depth + 1, max_length)) is not None:
                fault[0].append(f"{{}}[{i}]")
                return fault
    return None
