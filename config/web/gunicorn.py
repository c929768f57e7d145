"""gunicorn's worker and logger for the web processes (named by the checkout's ``gunicorn.conf.py``).

A request gunicorn refuses before the application sees it (a request line over
``limit_request_line``, headers over ``limit_request_fields`` / ``limit_request_field_size``, a
malformed request) is answered as the APIs' JSON error ``{"code", "detail"}`` with gunicorn's own
status, never its HTML page: ``SyncWorker`` (gunicorn's sync worker, the default) and
``ThreadWorker`` (gthread, for ``--threads``: ``-k config.web.gunicorn.ThreadWorker``). ``Logger``
redacts the secrets of the paths in gunicorn's access and error logs (``config.logs``)."""

import json

from gunicorn import glogging
from gunicorn.workers import gthread, sync

from config.logs import RedactSecrets

#: ``{status: (reason, code, detail)}`` of the answers gunicorn writes itself; any other status
#: is answered as ``FALLBACK`` with that status.
ERRORS = {
    400: ("Bad Request", "bad_request", "Bad request: not a well-formed HTTP/1.x request."),
    403: ("Forbidden", "forbidden", "Forbidden."),
    414: ("URI Too Long", "request_line_too_long", "Request line too long: shorten the path or the query string."),
    417: ("Expectation Failed", "expectation_failed", "Expectation failed: only Expect: 100-continue is understood."),
    431: ("Request Header Fields Too Large", "request_headers_too_large",
          "Request headers too large: too many header fields, or one too long."),
    500: ("Internal Server Error", "server_error", "Server error."),
    501: ("Not Implemented", "not_implemented", "Not implemented: a transfer coding the server does not support."),
}
FALLBACK = ("Bad Request", "bad_request", "Bad request.")


def json_error(status):
    """The whole HTTP answer (bytes) of gunicorn's refusal with ``status``, its body the JSON error."""
    reason, code, detail = ERRORS.get(status, FALLBACK)
    body = json.dumps({"code": code, "detail": detail}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode("latin-1") + body


class _JSONErrorSocket:
    """The client's socket as gunicorn's ``Worker.handle_error`` writes its error page to it: the
    page (one ``sendall``, its status line first) goes out as ``json_error`` of its status."""

    def __init__(self, sock):
        self._sock = sock

    def __getattr__(self, name):
        return getattr(self._sock, name)

    def sendall(self, data):
        status_line = bytes(data).split(b"\r\n", 1)[0].split()
        status = int(status_line[1]) if len(status_line) > 1 and status_line[1].isdigit() else 400
        self._sock.sendall(json_error(status))


class JSONErrors:
    """A worker's refusals written as ``json_error`` (gunicorn decides what and which status)."""

    def handle_error(self, req, client, addr, exc):
        super().handle_error(req, _JSONErrorSocket(client), addr, exc)


class SyncWorker(JSONErrors, sync.SyncWorker):
    pass


class ThreadWorker(JSONErrors, gthread.ThreadWorker):
    pass


#: One filter for every setup of the logs (``addFilter`` adds it once).
REDACT = RedactSecrets()


class Logger(glogging.Logger):
    """gunicorn's logger, its access and error lines through ``config.logs.RedactSecrets``."""

    def setup(self, cfg):
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            log.addFilter(REDACT)
