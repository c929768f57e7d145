"""Calls to an operator's wallet over HTTP (docs/wallet-api.md, "Transport", "Statuses"): the signed
body of each call, its sending, and what its answer means.

``POST {wallet_url}/{call}``, a JSON body with a new ``request_id`` and ``sent_at`` per attempt,
``X-Signature``: hex HMAC-SHA256 of the raw body with the operator's wallet secret. An answer is
known only when it is HTTP 200 with a JSON object whose ``status`` is one of ``STATUSES`` (an
``OK`` to a money call also with its ``balance`` as a money string); anything else (a timeout, a connection error,
another HTTP status, a body that is no such JSON) is an unknown outcome: the operator may or may
not have applied the call.

A call is never sent to an address no wallet may have (``accounts.addresses``): the URL's IP
literal is checked before the request, a name's addresses by the connector's resolver
(``CheckedResolver``), so the address checked is the one connected to, whatever the name
resolves to later. Such a call ``failed`` (it never reached the wallet): nothing to roll back,
nothing to retry until the operator's URL or name is put right (a supervisor's retry then).
"""

import asyncio
import hashlib
import hmac
import json
import math
import re
import socket
import time
import uuid
from dataclasses import dataclass
from datetime import datetime

import aiohttp
from aiohttp.abc import AbstractResolver
from aiohttp.helpers import is_ip_address
from django.conf import settings
from django.utils import timezone
from yarl import URL

from accounts.addresses import WalletAddressRefused, check_address
from accounts.exceptions import InvalidAmount
from accounts.models import MONEY
from accounts.money import parse_amount

STATUSES = frozenset({"OK", "INSUFFICIENT_FUNDS", "PLAYER_BLOCKED", "LIMIT_EXCEEDED", "DUPLICATE_TRANSACTION",
                      "ROLLED_BACK", "UNKNOWN_TRANSACTION"})
#: What the platform reads from a known status, by call: ``ok`` (applied; a rollback of a debit
#: never seen is done too: the operator keeps a tombstone), ``refused`` (a debit not applied: a
#: stake is rejected), ``failed`` (never retried: for operators to resolve).
READING = {
    "debit": {"OK": "ok", "INSUFFICIENT_FUNDS": "refused", "PLAYER_BLOCKED": "refused", "LIMIT_EXCEEDED": "refused",
              "ROLLED_BACK": "refused", "DUPLICATE_TRANSACTION": "failed"},
    "credit": {"OK": "ok", "DUPLICATE_TRANSACTION": "failed"},
    "rollback": {"OK": "ok", "UNKNOWN_TRANSACTION": "ok", "DUPLICATE_TRANSACTION": "failed"},
    "balance": {"OK": "ok"},
}


def transaction_id(key):
    """The operator-side id of the movement ``key``: ``<WALLET_INSTALLATION_ID>:<key>``."""
    return f"{settings.WALLET_INSTALLATION_ID}:{key}"


def money(amount, minor_units):
    """``amount`` (``Decimal``) as the protocol writes money: a string with exactly ``minor_units`` decimals."""
    return f"{amount:.{minor_units}f}"


def sign(body, secret):
    """Hex HMAC-SHA256 of ``body`` (bytes) with ``secret`` (str): the ``X-Signature`` header."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass
class Answer:
    """What one attempt of a call gave: ``outcome`` (``ok``, ``refused``, ``failed``, ``unknown``),
    the operator's ``status`` (None when unknown), ``http_status`` and ``body`` (the decoded JSON,
    NaN, infinities and numbers no float holds kept as their text; or the text; None without a
    response; the ``balance`` in it is read by ``wallets.balances``), ``error`` (why the outcome is unknown or
    failed), and the attempt itself: ``request`` (the body sent), ``request_id``, ``sent_at``,
    ``duration_ms``."""

    outcome: str
    status: str | None
    http_status: int | None
    body: object
    error: str
    request: dict
    request_id: uuid.UUID
    sent_at: datetime
    duration_ms: int


def _prepared(operator, call, fields):
    """``(url, body bytes, headers, request dict, request_id, sent_at)`` of one attempt."""
    request_id, sent_at = uuid.uuid4(), timezone.now()
    request = {**fields, "request_id": str(request_id), "sent_at": sent_at.isoformat().replace("+00:00", "Z")}
    body = json.dumps(request, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json", "X-Signature": sign(body, operator.wallet_secret)}
    return f"{operator.wallet_url.rstrip('/')}/{call}", body, headers, request, request_id, sent_at


def _finite(text):
    """A JSON number with a fraction or exponent as a float, or its text when no float holds it
    (``1e999999``): an answer's body is kept as JSON (a journal's JSON column takes no infinity)."""
    number = float(text)
    return number if math.isfinite(number) else text


#: The longest answer read from an operator's wallet, in bytes: a longer one is no answer (unknown
#: outcome), and only its first 2,000 bytes are kept in the journal.
MAX_ANSWER_BYTES = 64 * 1024


def _object(pairs):
    """A JSON object of ``pairs``; ``ValueError`` when a key is repeated (which value would count?)."""
    body = dict(pairs)
    if len(body) != len(pairs):
        raise ValueError("a key is repeated")
    return body


#: A character no text column of PostgreSQL stores: NUL, or half of a UTF-16 surrogate pair (JSON's
#: ``"\u0000"``, ``"\ud800"``; a lone surrogate has no UTF-8 form).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _storable(value):
    """Raise ``ValueError`` if a string of ``value`` (decoded JSON), a key or a value at any depth,
    holds a character of ``_UNSTORABLE``: the journal keeps every answer, and could keep no such
    one."""
    if isinstance(value, str):
        if _UNSTORABLE.search(value):
            raise ValueError("a string holds a NUL character or a lone UTF-16 surrogate")
    elif isinstance(value, dict):
        for key, item in value.items():
            _storable(key)
            _storable(item)
    elif isinstance(value, list):
        for item in value:
            _storable(item)


def _money_string(value):
    """Whether ``value`` (a decoded JSON value) is a money string: a JSON string as
    ``accounts.money.parse_amount`` takes it, a ``-`` too, with at most the money columns'
    decimals (a currency's own minor units are checked where its balance is read,
    ``wallets.balances``)."""
    if not isinstance(value, str):
        return False
    try:
        parse_amount(value, MONEY["decimal_places"], allow_zero=True, allow_negative=True)
    except InvalidAmount:
        return False
    return True


def _answer(call, request, request_id, sent_at, started, http_status=None, content=b"", error="", outcome="unknown"):
    """Read an attempt's answer: ``http_status`` and ``content`` (bytes), or None after ``error``
    (an ``outcome``: ``unknown``, or ``failed`` for a call not sent). A body that is not JSON in
    UTF-8 (too deep, a key repeated, longer than ``MAX_ANSWER_BYTES``, UTF-16) or holds a string the journal cannot
    store (``_storable``) is kept as text, cut, those characters replaced by U+FFFD: the outcome is
    unknown; so it is for an ``OK`` to a money call (debit, credit, rollback) whose ``balance`` is
    missing or no money string (``_money_string``): it does not follow the protocol. A balance
    call's ``balance`` is read in its currency by ``wallets.balances``."""
    duration = int((time.monotonic() - started) * 1000)
    body, status = None, None
    if http_status is not None:
        try:
            if len(content) > MAX_ANSWER_BYTES:
                raise ValueError(f"the answer is longer than {MAX_ANSWER_BYTES} bytes")
            body = json.loads(content.decode("utf-8-sig"), parse_float=_finite, parse_constant=str,
                              object_pairs_hook=_object)  # UTF-8 only (a byte order mark is skipped)
            _storable(body)
        except (ValueError, RecursionError) as e:
            body = _UNSTORABLE.sub("\ufffd", content[:2000].decode(errors="replace"))
            error = error or (f"the answer is not JSON ({e})"[:500] if http_status == 200 else "")
        if http_status != 200:
            error = error or f"HTTP {http_status}"
        elif not isinstance(body, dict) or body.get("status") not in STATUSES:
            error = error or "the answer has no known status"
        elif body["status"] == "OK" and call != "balance" and not _money_string(body.get("balance")):
            error = f"an OK answer with no balance as a money string: {body.get('balance')!r}"[:500]
        else:
            status = body["status"]
            outcome = READING[call].get(status, "unknown")
            if outcome == "unknown":
                error = f"{status} is no answer to a {call}"
    return Answer(outcome, status, http_status, body, error, request, request_id, sent_at, duration)


async def _read_capped(response):
    """The body of ``response`` up to ``MAX_ANSWER_BYTES`` + 1 bytes: reading stops past the cap."""
    content = bytearray()
    async for chunk in response.content.iter_chunked(16 * 1024):
        content += chunk
        if len(content) > MAX_ANSWER_BYTES:
            break
    return bytes(content)


class CheckedResolver(AbstractResolver):
    """aiohttp's default resolver, refusing a name any of whose addresses no wallet may have
    (``WalletAddressRefused``, raised through the request): the connector connects only to the
    addresses its resolver returns (and caches them as returned), so none other is reached."""

    def __init__(self):
        self._resolver = aiohttp.DefaultResolver()

    async def resolve(self, host, port=0, family=socket.AF_INET):
        found = await self._resolver.resolve(host, port, family)
        for address in found:
            check_address(address["host"])
        return found

    async def close(self):
        await self._resolver.close()


def _check_literal(url):
    """Raise ``WalletAddressRefused`` when ``url``'s host, read as aiohttp reads it (``yarl``), is
    written as an IP address (aiohttp's own test: its connector asks no resolver then) that no
    wallet may have, or that is no IP address in its usual form."""
    try:
        host = URL(url).raw_host
    except ValueError:  # no host to read: the request itself fails (an unknown outcome, as ever)
        return
    if is_ip_address(host):
        check_address(host)


async def _send(session, limit, operator, call, fields):
    """One attempt of ``call`` with ``fields`` through ``session`` (an ``aiohttp.ClientSession``
    whose connector resolves with ``CheckedResolver``), at most ``limit`` (a semaphore) at once,
    within the operator's timeout. A redirect is never followed (the signed call goes to the
    operator's ``wallet_url`` only): a 3xx is an unknown outcome; at most ``MAX_ANSWER_BYTES`` + 1
    bytes of the answer are read. A URL at an address no wallet may have is not sent: ``failed``."""
    async with limit:
        url, body, headers, request, request_id, sent_at = _prepared(operator, call, fields)
        started = time.monotonic()
        try:
            _check_literal(url)
            async with session.post(url, data=body, headers=headers, allow_redirects=False,  # 3xx: no answer
                                    timeout=aiohttp.ClientTimeout(total=operator.wallet_timeout_ms / 1000)) as response:
                content = await _read_capped(response)
        except WalletAddressRefused as e:
            return _answer(call, request, request_id, sent_at, started, error=f"not sent: {e}"[:500],
                           outcome="failed")
        except (aiohttp.ClientError, TimeoutError) as e:
            return _answer(call, request, request_id, sent_at, started, error=f"{type(e).__name__}: {e}"[:500])
        return _answer(call, request, request_id, sent_at, started, response.status, content)


def send_many(operator, calls):
    """Send every ``(call, fields)`` of ``calls`` (``debit``, ``credit``, ``rollback``) to
    ``operator``'s wallet at once, at most its ``wallet_concurrency`` (default
    ``WALLET_CONCURRENCY``) in flight, over one pool of kept-alive connections. Returns the
    ``Answer`` of each, in order; never raises for the network or an answer (those are unknown
    outcomes)."""
    concurrency = operator.wallet_concurrency or settings.WALLET_CONCURRENCY

    async def run():
        limit, resolver = asyncio.Semaphore(concurrency), CheckedResolver()
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency,
                                                                            resolver=resolver)) as session:
                return await asyncio.gather(*(_send(session, limit, operator, call, fields)
                                              for call, fields in calls))
        finally:
            await resolver.close()
    return asyncio.run(run()) if calls else []
