"""Keyset (cursor) pagination of the player API.

Pages are cut on a unique key in descending order (bets: ``(placed_at, id)``; ledger entries:
``(id,)``) with a row comparison such as ``(placed_at, id) < (t, 42)``, so that no row is skipped
or repeated when many share a time, rows added meanwhile never shift a page, and the database
walks its ``(player, placed_at, id)`` index instead of counting an offset.
"""

import base64
import binascii
import json
from datetime import UTC, datetime

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import F
from django.db.models.fields.tuple_lookups import Tuple, TupleGreaterThan, TupleLessThan
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import BasePagination
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from accounts.sql import shaped_rows

#: PostgreSQL's bigint range: a larger id in a cursor is malformed, not a lookup.
MAX_ID = 2**63 - 1


class KeysetPagination(BasePagination):
    """Newest first on ``ordering`` (model field names; the last must be unique, e.g. ``id``).

    Query parameters: ``cursor`` (opaque, from a ``next``/``previous`` link) and ``page_size``
    (1 to ``max_page_size``, default ``page_size``). A malformed cursor or page size raises a DRF
    ``ValidationError`` (400). The response is ``{"next": url|null, "previous": url|null,
    "results": [...]}`` plus whatever the view adds."""

    ordering = ("id",)
    page_size = 50
    max_page_size = 200
    #: Reads a page from its sliced queryset: ``list``, or e.g. ``accounts.sql.values_rows``.
    fetch = staticmethod(list)
    cursor_query_param = "cursor"
    cursor_description = "Opaque position from a next/previous link."
    page_size_query_param = "page_size"

    @property
    def query_params(self):
        """The query parameters this paginator reads."""
        return (self.cursor_query_param, self.page_size_query_param)

    def paginate_queryset(self, queryset, request, view=None):
        """The rows of the requested page (a list of models, or of dicts for a ``.values()``
        queryset that includes the ``ordering`` fields), ordered newest first."""
        return self._paginate(request, lambda position, backwards, size: self.fetch(
            self._page(queryset, position, backwards, size)))

    def paginate_shaped(self, request, shape, build, values):
        """``paginate_queryset`` of ``build(*values)`` (a ``.values()`` queryset), compiled once per
        process and page shape (``accounts.sql.shaped_rows``: ``values`` and the cursor's are the
        only differences of its SQL; ``shape`` names the query)."""
        def rows(position, backwards, size):
            def page(*given):
                return self._page(build(*given[:len(values)]), given[len(values):] or None, backwards, size)
            return shaped_rows((*shape, position is None, backwards, size), page, [*values, *(position or ())])
        return self._paginate(request, rows)

    def _page(self, queryset, position, backwards, size):
        """``queryset`` after ``position`` (a tuple of ``ordering`` values, or None: from the
        newest) in the direction asked, ordered so, with ``size`` rows and the one after."""
        if position is not None:
            keys = Tuple(*(F(name) for name in self.ordering))
            queryset = queryset.filter((TupleGreaterThan if backwards else TupleLessThan)(keys, position))
        direction = "" if backwards else "-"
        return queryset.order_by(*(direction + name for name in self.ordering))[:size + 1]

    def _paginate(self, request, fetch):
        """The requested page's rows from ``fetch(position, backwards, size)`` (``_page``'s rows)."""
        self.request = request
        size = self.get_page_size(request)
        position, backwards = self.decode_cursor(request)
        rows = fetch(position, backwards, size)
        more = len(rows) > size
        rows = rows[:size]
        if backwards:
            rows.reverse()
        self.next = self._link(rows[-1], False) if rows and (more or backwards) else None
        self.previous = self._link(rows[0], True) if rows and (more if backwards else position is not None) else None
        return rows

    def get_paginated_response(self, data):
        return Response({"next": self.next, "previous": self.previous, "results": data})

    def get_page_size(self, request):
        """``page_size`` as an int in 1..``max_page_size``; ``ValidationError`` otherwise."""
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= self.max_page_size:
            raise ValidationError({self.page_size_query_param: f"an integer from 1 to {self.max_page_size}"})
        return int(raw)

    # -- cursors: urlsafe base64 of JSON ["n"|"p", [key values...]] ---------------------------------

    def _link(self, row, backwards):
        values = [row[name] if isinstance(row, dict) else getattr(row, name) for name in self.ordering]
        payload = json.dumps(["p" if backwards else "n", [v.isoformat() if hasattr(v, "isoformat") else v
                                                           for v in values]], separators=(",", ":"))
        token = base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")
        return replace_query_param(self.request.build_absolute_uri(), self.cursor_query_param, token)

    def decode_cursor(self, request):
        """``(position tuple or None, backwards)`` from the ``cursor`` parameter; ``ValidationError``
        for anything that is not a cursor this paginator made."""
        token = request.query_params.get(self.cursor_query_param)
        if token is None:
            return None, False
        try:
            direction, raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
            if direction not in ("n", "p") or not isinstance(raw, list) or len(raw) != len(self.ordering):
                raise ValueError
            model = request.parser_context["view"].get_queryset().model
            position = tuple(self._key_value(model._meta.get_field(name), value)
                             for name, value in zip(self.ordering, raw))
        except (ValueError, TypeError, OverflowError, binascii.Error, DjangoValidationError, UnicodeDecodeError):
            raise ValidationError({self.cursor_query_param: "invalid cursor"}) from None
        return position, direction == "p"

    @staticmethod
    def _key_value(field, value):
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise ValueError
        parsed = field.to_python(value)
        if parsed is None or isinstance(parsed, int) and not 0 <= parsed <= MAX_ID:
            raise ValueError
        if isinstance(parsed, datetime):  # the paginator writes aware times within years 1-9999
            if parsed.tzinfo is None:
                raise ValueError
            parsed = parsed.astimezone(UTC)  # OverflowError just outside that range
        return parsed

    # -- OpenAPI -------------------------------------------------------------------------------------

    def get_schema_operation_parameters(self, view):
        return [
            {"name": self.cursor_query_param, "in": "query", "required": False,
             "description": self.cursor_description, "schema": {"type": "string", "minLength": 1}},
            {"name": self.page_size_query_param, "in": "query", "required": False,
             "description": f"Results per page (default {self.page_size}).",
             "schema": {"type": "integer", "minimum": 1, "maximum": self.max_page_size}},
        ]

    def get_paginated_response_schema(self, schema):
        # "example": drf-spectacular shows an operation's example row in a page of this shape
        link = {"type": "string", "format": "uri", "nullable": True, "example": None}
        return {"type": "object", "required": ["next", "previous", "results"],
                "properties": {"next": link, "previous": link, "results": schema}}
