"""Request signing of the game-server API, an option per service account next to TLS: a key with
a ``signing_secret`` must sign every request.

Headers: ``X-Signature-Timestamp`` (Unix seconds, an integer in ASCII digits only: no sign,
fraction or exponent), ``X-Signature-Nonce`` (a value the
client chooses anew for every request, a retry included: 16 to 64 letters, digits, ``-`` or
``_``, e.g. a UUID) and ``X-Signature`` (lowercase hex HMAC-SHA256 with the key's signing secret
of ``<timestamp>\n<nonce>\n<METHOD>\n<target>\n`` followed by the raw body bytes).
``<target>``: the path and query exactly as sent on the request line (``signed_target``). A
timestamp more than ``GAME_API_SIGNATURE_WINDOW_SECONDS`` away from the platform's clock, a
missing or malformed nonce, a wrong signature, or a nonce the service account already used
within twice the window (a replay; remembered in the cache) is refused (401
``authentication_failed``). Two requests with the same body are two calls when their nonces
differ: the API's idempotency (keys, external ids) makes a retry safe, not the signature.
"""

import hashlib
import hmac
import re
import time
import uuid

from django.conf import settings
from django.core.cache import cache
from rest_framework import exceptions

TIMESTAMP_HEADER, NONCE_HEADER, SIGNATURE_HEADER = "X-Signature-Timestamp", "X-Signature-Nonce", "X-Signature"
NONCE = re.compile(r"[A-Za-z0-9_-]{16,64}")


def signature(secret, timestamp, method, path, body, *, nonce):
    """The hex HMAC-SHA256 of one request: ``secret`` (str), ``timestamp`` (int or its str),
    ``method`` (``POST``), ``path`` (path and query string, as sent), ``body`` (bytes),
    ``nonce`` (str)."""
    message = f"{timestamp}\n{nonce}\n{method.upper()}\n{path}\n".encode() + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signed_headers(secret, method, path, body, now=None, nonce=None):
    """The three headers that sign a request (for studios' clients and the tests): a dict; a
    new nonce (a UUID's 32 hex digits) unless ``nonce`` is given."""
    timestamp = int(now if now is not None else time.time())
    nonce = nonce if nonce is not None else uuid.uuid4().hex
    return {TIMESTAMP_HEADER: str(timestamp), NONCE_HEADER: nonce,
            SIGNATURE_HEADER: signature(secret, timestamp, method, path, body, nonce=nonce)}


def signed_target(request):
    """The path and query a signature covers of ``request`` (Django's ``HttpRequest``): the request
    target exactly as sent, where the server passes it (``RAW_URI``: gunicorn; ``REQUEST_URI``:
    uWSGI and others; an absolute ``http://host/...`` form from its path on); else, as the
    server decoded it, re-quoted (``get_full_path``: Django's ``escape_uri_path``, and ``?`` with
    the query string only when there is one)."""
    raw = request.META.get("RAW_URI") or request.META.get("REQUEST_URI")
    if not raw:
        return request.get_full_path()
    if not raw.startswith("/") and "://" in raw:
        raw = "/" + raw.partition("://")[2].partition("/")[2]
    return raw


def verify(request, secret, account):
    """Raise ``AuthenticationFailed`` unless ``request`` (Django's ``HttpRequest``) carries a
    valid, fresh signature made with ``secret`` under a nonce the service account ``account``
    (its key's id) has not used before."""
    timestamp, given = request.headers.get(TIMESTAMP_HEADER, ""), request.headers.get(SIGNATURE_HEADER, "")
    nonce = request.headers.get(NONCE_HEADER, "")
    if not timestamp or not given or not nonce:
        raise exceptions.AuthenticationFailed(f"This service account signs its requests: {TIMESTAMP_HEADER}, "
                                              f"{NONCE_HEADER} and {SIGNATURE_HEADER} are required.")
    if not timestamp.isascii() or not timestamp.isdigit():
        raise exceptions.AuthenticationFailed(f"{TIMESTAMP_HEADER} must be whole seconds since the epoch, digits only.")
    if not NONCE.fullmatch(nonce):
        raise exceptions.AuthenticationFailed(
            f"{NONCE_HEADER} is 16 to 64 letters, digits, '-' or '_', new for every request.")
    if not given.isascii():
        raise exceptions.AuthenticationFailed(f"{SIGNATURE_HEADER} is the HMAC-SHA256 in hexadecimal.")
    window = settings.GAME_API_SIGNATURE_WINDOW_SECONDS
    if len(timestamp) > 12 or abs(time.time() - int(timestamp)) > window:  # 12 digits: far past any clock
        raise exceptions.AuthenticationFailed(f"{TIMESTAMP_HEADER} is more than {window} s away from the clock.")
    expected = signature(secret, timestamp, request.method, signed_target(request), request.body, nonce=nonce)
    if not hmac.compare_digest(expected, given.lower()):
        raise exceptions.AuthenticationFailed("The request's signature does not match.")
    if not cache.add(f"game-api-nonce:{account}:{nonce}", 1, timeout=2 * window):
        raise exceptions.AuthenticationFailed(f"This {NONCE_HEADER} was already used: a replayed request (a retry "
                                              "is signed again with a new nonce).")
