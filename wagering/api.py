"""The game-server API's plumbing: who may call it, and how errors look.

Every error is ``{"code": "<stable code>", "detail": "<sentence>"}`` (plus ``"field"`` for
``invalid_record``), from the round/bet errors (``wagering.exceptions``), the ledger's errors
(``accounts.exceptions``, by their ``.code``) and DRF's own (authentication, permission, parsing).
"""

import json
import math
import re

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework import exceptions as drf
from rest_framework.parsers import JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from accounts.exceptions import LedgerError

from .exceptions import WageringError

GAME_SERVER_GROUP = "game_server"

#: HTTP status of the ledger's error codes (others: 400).
LEDGER_STATUS = {"insufficient_funds": 409, "idempotency_conflict": 409}


class IsGameServer(BasePermission):
    """A game-server service account: an active user in the ``game_server`` group or holding
    ``wagering.use_game_api``. Superusers (operators) are not game servers."""

    message = "Only the game server may call this API."

    def has_permission(self, request, view):
        user = request.user
        if not user or not user.is_authenticated or user.is_superuser:
            return False
        return user.groups.filter(name=GAME_SERVER_GROUP).exists() or user.has_perm("wagering.use_game_api")


#: A ``\uD800``-``\uDFFF`` escape in a JSON text: a UTF-16 surrogate, half of a pair or alone.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _finite_float(text):
    """A JSON number with a fraction or exponent as a ``float``; ``ValueError`` when it overflows
    to infinity (``1e400``), which no database column or ``jsonb`` takes."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:30]} is out of range")
    return value


def _no_constant(name):
    raise ValueError(f"{name} is not valid JSON")


class SafeJSONParser(JSONParser):
    """The parser of both APIs: strict JSON in UTF-8 that PostgreSQL can store, else a
    ``ParseError`` (400 ``invalid_input``) — never a 500 or Django's HTML 400. Refused: ``NaN``
    and ``Infinity``, a number that overflows to infinity (``1e400``), a string holding a lone
    UTF-16 surrogate (``"\\ud800"`` in JSON: it has no UTF-8 form), a body nested too deep for the
    decoder (``RecursionError``) or too large (``RequestDataTooBig``)."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = stream.read().decode(encoding)
            data = json.loads(text, parse_float=_finite_float, parse_constant=_no_constant)
            if _SURROGATE_ESCAPE.search(text):  # pairs decode to one character; a lone one stays
                json.dumps(data, ensure_ascii=False).encode("utf-8")
            return data
        except RecursionError:
            raise drf.ParseError("JSON parse error - nested too deeply") from None
        except RequestDataTooBig:
            raise drf.ParseError("request body too large") from None
        except LookupError:  # a charset that is a codec but not a text encoding (rot13, base64)
            raise drf.ParseError(f"JSON parse error - {encoding!r} is not a text encoding") from None
        except UnicodeEncodeError:
            raise drf.ParseError("JSON parse error - a string holds a lone UTF-16 surrogate (\\ud800-\\udfff) "
                                 "with no UTF-8 form") from None
        except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, out-of-range numbers
            raise drf.ParseError(f"JSON parse error - {e}") from None


def _flatten(detail):
    if isinstance(detail, dict):
        return "; ".join(f"{k}: {_flatten(v)}" for k, v in detail.items())
    if isinstance(detail, list):
        return " ".join(_flatten(v) for v in detail)
    return str(detail)


def error_body(exc):
    """``{"code", "detail"[, "field"]}`` for a ``WageringError`` or ``LedgerError``."""
    body = {"code": exc.code, "detail": str(exc)}
    body.update(getattr(exc, "extra", {}))
    return body


def exception_handler(exc, context):
    """DRF exception handler of the game-server API (see the module docstring)."""
    if isinstance(exc, WageringError):
        return Response(error_body(exc), status=exc.status)
    if isinstance(exc, LedgerError):
        return Response(error_body(exc), status=LEDGER_STATUS.get(exc.code, 400))
    if isinstance(exc, RequestDataTooBig):
        return Response({"code": "invalid_input", "detail": "request body too large"}, status=413)
    response = drf_exception_handler(exc, context)
    if response is not None:
        code = "invalid_input" if isinstance(exc, (drf.ValidationError, drf.ParseError)) else \
            getattr(exc, "default_code", "error")
        response.data = {"code": code, "detail": _flatten(getattr(exc, "detail", str(exc)))}
    return response


class GameAPIView(APIView):
    """Base of the game-server views: ``IsGameServer`` and the error format above. ``actor``
    gives the services' actor arguments for the calling service account."""

    permission_classes = [IsGameServer]
    parser_classes = [SafeJSONParser]

    def get_exception_handler(self):
        return exception_handler

    def actor(self):
        """``{"actor": "game-server:<username>", "actor_user": <User>}`` for a service call."""
        return {"actor": f"game-server:{self.request.user.get_username()}", "actor_user": self.request.user}
