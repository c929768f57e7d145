"""What the platform's APIs share: the strict JSON parsers, the error format, the request bodies and
fields that take their JSON type only, and the ``Authorization: Bearer`` credential.

Every error is ``{"code": "<stable code>", "detail": "<sentence>"}`` (plus ``"field"`` for
``invalid_record``), from the platform's named errors (``accounts.exceptions.PlatformError``: the
ledger's, the operators', and the game services' ``ServiceError``, each with its HTTP status) and
DRF's own (authentication, permission, parsing).
"""

import logging
from collections.abc import Mapping

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import OperationalError
from drf_spectacular.extensions import OpenApiSerializerExtension, OpenApiSerializerFieldExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import exceptions as drf
from rest_framework import serializers
from rest_framework.authentication import get_authorization_header
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from accounts.exceptions import PlatformError
from tables.exceptions import InvalidInput
from tables.validation import strict_json, unknown_keys

logger = logging.getLogger(__name__)


class RequestTooLarge(drf.APIException):
    """A request body larger than ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (413 ``request_too_large``)."""

    status_code = 413
    default_code = "request_too_large"
    default_detail = "request body too large"


#: How long a client should wait before it sends again a request the database was too busy for.
RETRY_AFTER_SECONDS = 1


class JSONOnly:
    """Mixin of every API's base view (game server, player, operator): answers, errors included,
    are JSON whatever ``Accept`` or ``?format=`` asks for (never DRF's browsable HTML)."""

    renderer_classes = [JSONRenderer]

    def perform_content_negotiation(self, request, force=False):
        return super().perform_content_negotiation(request, force=True)


class SafeJSONParser(JSONParser):
    """The parser of the three APIs: strict JSON in UTF-8 that PostgreSQL can store
    (``tables.validation.strict_json``), else a ``ParseError`` (400 ``invalid_input``) — never a
    500 or Django's HTML 400. Refused: ``NaN`` and ``Infinity``, a number that overflows to
    infinity (``1e400``), an integer of more than 4,300 digits, a string holding a lone
    UTF-16 surrogate (``"\\ud800"`` in JSON: it has no UTF-8 form), a NUL character in any string,
    a key or a value at any depth (``"\\u0000"``: PostgreSQL stores none; the detail names where,
    e.g. ``bets[0].player``), a body nested too deep for the decoder (``RecursionError``), an
    object with a repeated key (``{"stake": "1.00", "stake": "25.00"}``: which one was meant?); a
    body too large is ``RequestTooLarge`` (413)."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return strict_json(stream.read().decode(encoding))
        except InvalidInput as e:
            raise drf.ParseError(str(e)) from None
        except RequestDataTooBig:
            raise RequestTooLarge() from None
        except LookupError:  # a charset that is a codec but not a text encoding (rot13, base64)
            raise drf.ParseError(f"JSON parse error - {encoding!r} is not a text encoding") from None
        except ValueError as e:  # strict_json's refusals, UnicodeDecodeError
            raise drf.ParseError(f"JSON parse error - {e}") from None


def bearer_credential(request):
    """The credential of ``Authorization: Bearer <credential>`` (case-insensitive keyword), a str of
    printable ASCII of at most 200 characters; None when the header is absent or of another
    scheme. ``AuthenticationFailed`` (401) for a Bearer header without exactly one such credential."""
    words = get_authorization_header(request).split()
    if not words or words[0].lower() != b"bearer":
        return None
    try:
        credential = words[1].decode("ascii") if len(words) == 2 else ""
    except UnicodeDecodeError:
        credential = ""
    if not credential or len(credential) > 200 or not credential.isprintable():
        raise drf.AuthenticationFailed("Invalid Authorization header: expected 'Bearer <credential>'.")
    return credential


def _flatten(detail):
    if isinstance(detail, dict):
        return "; ".join(f"{k}: {_flatten(v)}" for k, v in detail.items())
    if isinstance(detail, list):
        return " ".join(_flatten(v) for v in detail)
    return str(detail)


def error_body(exc):
    """``{"code", "detail"[, "field"]}`` for a ``PlatformError``."""
    body = {"code": exc.code, "detail": str(exc)}
    body.update(getattr(exc, "extra", {}))
    return body


def exception_handler(exc, context):
    """DRF exception handler of the APIs (see the module docstring). A body too large is 413
    ``request_too_large``; a database error that outlived its retries (a lock wait timed out:
    SQLite's "database is locked", PostgreSQL's lock timeout or lost connection) is 503
    ``database_busy`` with ``Retry-After`` (the request changed nothing: its transaction rolled
    back), never an HTML page; it is logged (a warning with the error) for the on-call engineer."""
    if isinstance(exc, PlatformError):
        return Response(error_body(exc), status=exc.status)
    if isinstance(exc, RequestDataTooBig):
        exc = RequestTooLarge()
    if isinstance(exc, OperationalError):
        request = context.get("request")
        logger.warning("database error answered 503 database_busy: %s %s", getattr(request, "method", "?"),
                       getattr(request, "path", "?"), exc_info=exc)
        return Response({"code": "database_busy", "detail": "the database is busy: nothing was written, send the "
                         f"request again in {RETRY_AFTER_SECONDS} s"}, status=503,
                        headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
    response = drf_exception_handler(exc, context)
    if response is not None:
        code = "invalid_input" if isinstance(exc, (drf.ValidationError, drf.ParseError)) else \
            getattr(exc, "default_code", "error")
        response.data = {"code": code, "detail": _flatten(getattr(exc, "detail", str(exc)))}
    return response


def refuse_unknown_query_params(request, allowed):
    """``ValidationError`` (400 ``invalid_input``) when ``request`` (DRF's) holds a query parameter
    not in ``allowed`` (names): none is ignored silently, a misspelt filter least of all."""
    unknown = sorted(set(request.query_params) - set(allowed))
    if unknown:
        raise drf.ValidationError(f"unknown query parameter(s): {', '.join(unknown)[:200]}")


def refuse_repeated_query_params(request):
    """``ValidationError`` (400 ``invalid_input``) when a query parameter of ``request`` (DRF's)
    is given more than once: none takes the last value silently."""
    repeated = sorted(key for key, values in request.query_params.lists() if len(values) > 1)
    if repeated:
        raise drf.ValidationError(f"query parameter(s) given more than once: {', '.join(repeated)[:200]}")


def refuse_nul_query_params(request):
    """``ValidationError`` (400 ``invalid_input``) when a query parameter of ``request`` (DRF's),
    its name or a value, holds a NUL character."""
    if any("\x00" in key or any("\x00" in value for value in values)
           for key, values in request.query_params.lists()):
        raise drf.ValidationError("query parameters must not contain NUL bytes")


@extend_schema_field(OpenApiTypes.STR)
class AmountField(serializers.Field):
    """A money amount as a decimal string (``"12.50"``), passed through untouched to the services,
    which reject floats, negatives, extra decimals and non-numbers (``invalid_amount``)."""

    def to_internal_value(self, data):
        return data

    def to_representation(self, value):
        return str(value)


class StrictCharField(serializers.CharField):
    """A JSON string, nothing else (DRF's ``CharField`` turns ``5`` into ``"5"``). A NUL in it
    never gets here: ``SafeJSONParser`` refuses it with one sentence."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class DistinctListField(serializers.ListField):
    """A list whose items must be distinct: its schema says ``uniqueItems``; the service it feeds
    refuses a repeated item with its own sentence (``accounts.operators.upsert_player``)."""


class DistinctListFieldScheme(OpenApiSerializerFieldExtension):
    """The OpenAPI schema of ``DistinctListField``: a ``ListField``'s, with ``uniqueItems``."""

    target_class = DistinctListField

    def map_serializer_field(self, auto_schema, direction):
        return {**auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True),
                "uniqueItems": True}


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer, nothing else (DRF's ``IntegerField`` takes ``"1"``, ``1.0`` and ``true``)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """``true`` or ``false``, nothing else (DRF's ``BooleanField`` takes ``"yes"``, ``"on"``, ``1``)."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictSerializer(serializers.Serializer):
    """A request body: a JSON object of the declared fields only; any other key is refused (400,
    named in the detail), and the schema says so (``additionalProperties: false``)."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = unknown_keys(data, self.fields)
            if unknown:
                raise serializers.ValidationError({key: "unknown field" for key in unknown})
        return super().to_internal_value(data)


class StrictSerializerExtension(OpenApiSerializerExtension):
    """The OpenAPI schema of every ``StrictSerializer``: its fields, and no other property."""

    target_class = StrictSerializer
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        return {**auto_schema._map_basic_serializer(self.target, direction), "additionalProperties": False}


class ErrorSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable machine-readable error code, e.g. insufficient_funds.")
    detail = serializers.CharField(help_text="A sentence for humans.")
    field = serializers.CharField(required=False, help_text="invalid_record: the record's field path.")
