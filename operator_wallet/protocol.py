"""The protocol's vocabulary (docs/wallet-api.md): the calls and their fields, the statuses, the
kinds, the signature, and ``parse``, which turns a request body into a ``Call`` or refuses it
with ``BadCall``."""

import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

OK = "OK"
INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS"
PLAYER_BLOCKED = "PLAYER_BLOCKED"
LIMIT_EXCEEDED = "LIMIT_EXCEEDED"
DUPLICATE_TRANSACTION = "DUPLICATE_TRANSACTION"
ROLLED_BACK = "ROLLED_BACK"
UNKNOWN_TRANSACTION = "UNKNOWN_TRANSACTION"

DEBIT_KINDS = frozenset({"stake", "double", "split", "insurance", "follow_double", "follow_split", "correction"})
CREDIT_KINDS = frozenset({"payout", "refund", "resettle", "adjustment"})

#: Every body carries these; they differ between attempts of one call, so a replay ignores them.
ENVELOPE = ("request_id", "sent_at")

#: The fields of each call's body besides ``ENVELOPE``.
FIELDS = {
    "balance": ("player", "currency"),
    "debit": ("transaction_id", "player", "currency", "amount", "round", "table", "kind", "bets"),
    "credit": ("transaction_id", "player", "currency", "amount", "round", "table", "kind", "bets"),
    "rollback": ("transaction_id", "reference_transaction_id", "player", "currency", "round"),
}
CALLS = tuple(FIELDS)

SIGNATURE_HEADER = "X-Signature"

_KEYS = {name: frozenset((*ENVELOPE, *fields)) for name, fields in FIELDS.items()}
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def signature(secret, body):
    """The hex HMAC-SHA256 of ``body`` (bytes) under ``secret`` (bytes)."""
    return hmac.digest(secret, body, hashlib.sha256).hex()


def signed(secret, header, body):
    """True when ``header`` (the ``X-Signature`` value, or None) signs ``body`` under ``secret``;
    hex digits of either case are accepted."""
    return header is not None and header.isascii() and hmac.compare_digest(signature(secret, body), header.lower())


class BadCall(ValueError):
    """The request is not a valid call (HTTP 400); the message says why. Nothing was applied."""


@dataclass(slots=True)
class Call:
    """One parsed call. ``fields`` is the body less ``ENVELOPE``: what a repeated ``transaction_id``
    must carry again to be the same call. ``amount`` is a ``Decimal`` (debit and credit only);
    ``transaction_id`` is None for ``balance``; ``reference`` is a rollback's
    ``reference_transaction_id``."""

    name: str
    player: str
    currency: str
    fields: dict
    transaction_id: str | None = None
    amount: Decimal | None = None
    reference: str | None = None


def _unique_keys(pairs):
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise BadCall(f"the body repeats the key(s) {sorted({k for k in keys if keys.count(k) > 1})}")
    return dict(pairs)


def loads(body):
    """The JSON value of ``body`` (bytes: UTF-8 JSON); ``BadCall`` when it is not UTF-8 JSON, is
    nested too deep to read, or repeats a key in an object (which of the values would count?)."""
    try:
        return json.loads(body.decode(), object_pairs_hook=_unique_keys)
    except BadCall:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BadCall("the body is not UTF-8 JSON (or is nested too deep)") from None


def parse(name, body, currencies):
    """The ``Call`` ``name`` (one of ``CALLS``) that ``body`` (bytes) makes, its money read in
    ``currencies`` (``operator_wallet.money.Currencies``).

    Raises ``BadCall`` when the body is not a UTF-8 JSON object (``loads``: no key repeated)
    with exactly the call's fields (``ENVELOPE`` and ``FIELDS[name]``), each well formed:
    ``request_id`` a UUID in its 8-4-4-4-12 hex form, ``sent_at`` an ISO 8601 time in UTC, ids
    and player codes non-empty strings without a NUL character, the currency one the wallet
    keeps, amounts per ``Currencies.amount`` (a debit's above zero), ``kind`` one of the call's
    kinds, ``round`` and ``table`` a non-empty string, an integer or null, ``bets`` a list of bet
    ids (non-empty strings or integers), a rollback's reference other
    than its own id."""
    data = loads(body)
    if not isinstance(data, dict):
        raise BadCall("the body is not a JSON object")
    keys = _KEYS[name]
    if data.keys() != keys:
        missing, unknown = sorted(keys - data.keys()), sorted(data.keys() - keys)
        raise BadCall(f"{name}: missing {missing or 'nothing'}, unknown {unknown or 'nothing'}")
    _check_envelope(data)
    fields = data  # the body less the envelope, from here on
    del fields["request_id"], fields["sent_at"]
    player, currency = _nonempty(fields, "player"), fields["currency"]
    if not isinstance(currency, str) or currency not in currencies:
        raise BadCall(f"currency {currency!r} is not kept by this wallet")
    if name == "balance":
        return Call(name, player, currency, fields)
    transaction_id = _nonempty(fields, "transaction_id")
    _optional_id(fields, "round")
    if name == "rollback":
        reference = _nonempty(fields, "reference_transaction_id")
        if reference == transaction_id:
            raise BadCall("a rollback's transaction_id must differ from the debit it rolls back")
        return Call(name, player, currency, fields, transaction_id, reference=reference)
    _optional_id(fields, "table")
    if not isinstance(fields["kind"], str) or fields["kind"] not in (DEBIT_KINDS if name == "debit" else CREDIT_KINDS):
        raise BadCall(f"kind {fields['kind']!r} is not a {name} kind")
    bets = fields["bets"]
    if not isinstance(bets, list) or not all(_is_id(bet) for bet in bets):
        raise BadCall("bets must be a list of bet ids (non-empty strings or integers)")
    for bet in bets:
        _no_nul(bet, "bets")
    try:
        amount = currencies.amount(currency, fields["amount"])
    except ValueError as error:
        raise BadCall(str(error)) from None
    if name == "debit" and not amount:
        raise BadCall("a debit's amount must be above zero")
    return Call(name, player, currency, fields, transaction_id, amount)


def _check_envelope(data):
    request_id, sent_at = data["request_id"], data["sent_at"]
    if not isinstance(request_id, str) or not _UUID.fullmatch(request_id):
        raise BadCall(f"request_id {request_id!r} is not a UUID (8-4-4-4-12 hex digits)")
    try:
        moment = datetime.fromisoformat(sent_at)
    except (TypeError, ValueError):
        raise BadCall(f"sent_at {sent_at!r} is not an ISO 8601 time") from None
    if moment.utcoffset() != timedelta(0):
        raise BadCall(f"sent_at {sent_at!r} is not in UTC")


def _nonempty(fields, key):
    value = fields[key]
    if not isinstance(value, str) or not value:
        raise BadCall(f"{key} must be a non-empty string")
    _no_nul(value, key)
    return value


def _no_nul(value, key):
    if isinstance(value, str) and "\x00" in value:
        raise BadCall(f"{key} must not contain a NUL character")


def _is_id(value):
    return (isinstance(value, str) and value != "") or (isinstance(value, int) and not isinstance(value, bool))


def _optional_id(fields, key):
    if fields[key] is not None and not _is_id(fields[key]):
        raise BadCall(f"{key} must be a non-empty string, an integer or null")
    _no_nul(fields[key], key)
