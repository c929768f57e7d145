"""Secrets in the operator API's paths: ``DELETE sessions/{token}`` carries the player's session
token in its path (``POST sessions/end`` takes it in the body instead). What stores or logs a path
(the calls' audit, ``config.logs``, ``config.web.gunicorn``) shows it through ``redact_secrets``."""

import re

#: What a stored path or a log line shows instead of the token of ``sessions/{token}``.
REDACTED_TOKEN = "(token)"
_TOKEN_IN_PATH = re.compile(r"(/api/operator/v1/sessions/)(?!end(?![^/?#\s\"']))[^/?#\s\"']+")


def redact_secrets(text):
    """``text`` (a path, a request line, a log message) with the token of each operator API path
    ``sessions/{token}`` in it replaced by ``REDACTED_TOKEN`` (``sessions/end`` is kept)."""
    return _TOKEN_IN_PATH.sub(rf"\g<1>{REDACTED_TOKEN}", text)
