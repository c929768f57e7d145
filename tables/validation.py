"""The check of JSON the platform stores as evidence (round records, timeline payloads): PostgreSQL
rejects NUL characters in ``text`` and ``jsonb``, so every string stored is checked here
(``invalid_input``): a NUL is a 400, never a database error."""

from .exceptions import InvalidInput

#: The deepest nesting a stored JSON value may have.
MAX_DEPTH = 32


def check_json(value, name="payload", depth=0, *, max_length=None):
    """Raise ``InvalidInput`` if ``value`` (decoded JSON to store in a ``jsonb``) holds a NUL
    character in any string (keys included), a string longer than ``max_length`` characters (if
    given), or is nested deeper than ``MAX_DEPTH``."""
    if depth > MAX_DEPTH:
        raise InvalidInput(f"{name}: nested too deeply")
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidInput(f"{name}: must not contain NUL characters")
        if max_length is not None and len(value) > max_length:
            raise InvalidInput(f"{name}: texts are at most {max_length} characters")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_json(key, name, depth + 1, max_length=max_length)
            check_json(item, f"{name}.{key}"[:200], depth + 1, max_length=max_length)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_json(item, f"{name}[{i}]"[:200], depth + 1, max_length=max_length)
