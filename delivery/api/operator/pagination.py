"""The statement's pages: ledger entries oldest first, read on from an opaque cursor."""

import base64
import binascii

from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from delivery.api.player.pagination import MAX_ID, KeysetPagination


def cursor_after(entry_id):
    """The opaque cursor after the entry ``entry_id``: urlsafe base64 of its id, unpadded."""
    return base64.urlsafe_b64encode(str(entry_id).encode()).decode().rstrip("=")


def entry_of_cursor(token):
    """The entry id of ``token`` (a cursor ``cursor_after`` made); ``ValueError`` for anything else."""
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode("ascii")
    except (binascii.Error, UnicodeError, ValueError):
        raise ValueError(token) from None
    if not text.isdigit() or not 1 <= int(text) <= MAX_ID or cursor_after(int(text)) != token:
        raise ValueError(token)
    return int(text)


class StatementPagination(KeysetPagination):
    """Entries oldest first by ``id``, forward only: the operator reads its statement to the end and
    later on from where it stopped. Query parameters: ``cursor`` (opaque: a page's ``next``) and
    ``page_size`` (1 to 1000, default 500); a malformed one is a ``ValidationError`` (400). The page
    is ``{"entries": [...], "next": cursor, "has_more": bool}``: ``next`` is the position after the
    page's last entry (with an empty page, the cursor given; null when there is none yet), to read
    on from now or later; ``has_more`` says whether entries follow already."""

    page_size = 500
    max_page_size = 1000
    cursor_description = "Opaque position: a page's next."

    def paginate_queryset(self, queryset, request, view=None):
        """The page's entries of ``queryset`` (ordered by ``id`` here)."""
        size = self.get_page_size(request)
        token = request.query_params.get(self.cursor_query_param)
        if token is not None:
            try:
                queryset = queryset.filter(id__gt=entry_of_cursor(token))
            except ValueError:
                raise ValidationError({self.cursor_query_param: "invalid cursor"}) from None
        rows = list(queryset.order_by("id")[:size + 1])
        self.has_more = len(rows) > size
        rows = rows[:size]
        self.next = cursor_after(rows[-1].pk) if rows else token
        return rows

    def get_paginated_response(self, data):
        return Response({"entries": data, "next": self.next, "has_more": self.has_more})

    def get_paginated_response_schema(self, schema):
        return {"type": "object", "required": ["entries", "next", "has_more"], "properties": {
            "entries": schema,
            "next": {"type": "string", "nullable": True, "example": "NDAyMzA",
                     "description": "Cursor after this page's last entry: read on from it now or later."},
            "has_more": {"type": "boolean", "example": False,
                         "description": "Whether entries after this page exist already."}}}
