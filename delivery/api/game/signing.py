"""Request signing of the game-server API, an option per service account next to TLS: a key with
a ``signing_secret`` must sign every request.

Headers: ``X-Signature-Timestamp`` (Unix seconds, an integer) and ``X-Signature`` (lowercase hex
HMAC-SHA256 with the key's signing secret of ``<timestamp>\\n<METHOD>\\n<target>\\n`` followed by
the raw body bytes). ``<target>``: the path and query exactly as sent on the request line
(``signed_target``). A timestamp more than ``GAME_API_SIGNATURE_WINDOW_SECONDS`` away
from the platform's clock, a wrong signature, or a signature already used within the window (a
replay) is refused (401 ``authentication_failed``).
"""

import hashlib
import hmac
import time

from django.conf import settings
from django.core.cache import cache
from rest_framework import exceptions

TIMESTAMP_HEADER, SIGNATURE_HEADER = "X-Signature-Timestamp", "X-Signature"


def signature(secret, timestamp, method, path, body):
    """The hex HMAC-SHA256 of one request: ``secret`` (str), ``timestamp`` (int or its str),
    ``method`` (``POST``), ``path`` (path and query string, as sent), ``body`` (bytes)."""
    message = f"{timestamp}\n{method.upper()}\n{path}\n".encode() + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signed_headers(secret, method, path, body, now=None):
    """The two headers that sign a request (for studios' clients and the tests): a dict."""
    timestamp = int(now if now is not None else time.time())
    return {TIMESTAMP_HEADER: str(timestamp), SIGNATURE_HEADER: signature(secret, timestamp, method, path, body)}


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


def verify(request, secret):
    """Raise ``AuthenticationFailed`` unless ``request`` (Django's ``HttpRequest``) carries a
    valid, fresh, unused signature made with ``secret``."""
    timestamp, given = request.headers.get(TIMESTAMP_HEADER, ""), request.headers.get(SIGNATURE_HEADER, "")
    if not timestamp.isascii() or not timestamp.isdigit() or not given:
        raise exceptions.AuthenticationFailed(
            f"This service account signs its requests: {TIMESTAMP_HEADER} and {SIGNATURE_HEADER} are required.")
    if not given.isascii():
        raise exceptions.AuthenticationFailed(f"{SIGNATURE_HEADER} is the HMAC-SHA256 in hexadecimal.")
    window = settings.GAME_API_SIGNATURE_WINDOW_SECONDS
    if len(timestamp) > 12 or abs(time.time() - int(timestamp)) > window:  # 12 digits: far past any clock
        raise exceptions.AuthenticationFailed(f"{TIMESTAMP_HEADER} is more than {window} s away from the clock.")
    expected = signature(secret, timestamp, request.method, signed_target(request), request.body)
    if not hmac.compare_digest(expected, given.lower()):
        raise exceptions.AuthenticationFailed("The request's signature does not match.")
    if not cache.add(f"game-api-signature:{expected}", 1, timeout=2 * window):
        raise exceptions.AuthenticationFailed("This signature was already used: a replayed request.")
