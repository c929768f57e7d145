"""The check of JSON the platform stores as evidence (round records, timeline payloads): PostgreSQL
rejects NUL characters in ``text`` and ``jsonb``, so every string stored is checked here
(``invalid_input``): a NUL is a 400, never a database error. ``strict_json``: the decoding of a
JSON text every API body and the admin's corrected records go through. And ``unknown_keys``, what
every request body and batch item refuses beyond its call's keys."""

import json
import math
import re
import sys

from .exceptions import InvalidInput

#: The deepest nesting a stored JSON value may have.
MAX_DEPTH = 32


def unknown_keys(data, fields):
    """The keys of ``data`` (a body's object) that are not in ``fields``: sorted, the first 10,
    each cut to 64 characters."""
    return sorted(str(key)[:64] for key in set(data) - set(fields))[:10]


#: A ``\uD800``-``\uDFFF`` escape in a JSON text: a UTF-16 surrogate, half of a pair or alone.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def strict_json(text):
    """``text`` (a str) decoded as JSON that PostgreSQL can store, strictly. Raises ``ValueError``
    with a sentence for text that is not such JSON: malformed; ``NaN`` or ``Infinity``; a number
    that overflows to infinity (``1e400``) or an integer of more digits than Python converts
    (``sys.get_int_max_str_digits()``, 4,300); a string holding a lone UTF-16 surrogate
    (``"\\ud800"``: it has no UTF-8 form); an object with a repeated key (which one was meant?);
    nesting too deep for the decoder. Raises ``InvalidInput`` (``check_json``'s sentence, naming
    where) for a NUL character in any string, a key or a value at any depth (``"\\u0000"``)."""
    try:
        data = json.loads(text, parse_float=_finite_float, parse_int=_bounded_int, parse_constant=_no_constant,
                          object_pairs_hook=_object_of_unique_keys)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if _SURROGATE_ESCAPE.search(text):  # pairs decode to one character; a lone one stays
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a string holds a lone UTF-16 surrogate (\\ud800-\\udfff) with no UTF-8 form") from None
    if "\\u0000" in text:  # JSON's only way to hold a NUL (a raw one is refused by json.loads)
        check_json(data, name="")
    return data


def _finite_float(text):
    """A JSON number with a fraction or exponent as a ``float``; ``ValueError`` when it overflows
    to infinity (``1e400``), which no database column or ``jsonb`` takes."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:30]} is out of range")
    return value


def _bounded_int(text):
    """A JSON integer as an ``int``; ``ValueError`` beyond the digits Python converts."""
    limit = sys.get_int_max_str_digits()
    if limit and len(text.lstrip("-")) > limit:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits is out of range (at most {limit})")
    return int(text)


def _no_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def _object_of_unique_keys(pairs):
    """A JSON object's ``(key, value)`` pairs as a dict; ``ValueError`` when a key repeats."""
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"key {key[:64]!r} appears twice in one object")
        seen.add(key)
    return dict(pairs)


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
