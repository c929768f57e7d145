"""The bet list of the player API, which the operator API serves over its players' bets as well:
the filters (``BetFilter``), newest-first keyset pages with the totals of the filtered range
(``BetPagination``), each row as ``PlayerBetSerializer`` shows it (``bet_row``)."""

from zoneinfo import ZoneInfo

from django_filters.rest_framework import DjangoFilterBackend

from accounts.sql import values_rows
from wagering.models import Bet
from wagering.selectors import bet_totals

from . import serializers as s
from .filters import BetFilter
from .pagination import KeysetPagination


class BetPagination(KeysetPagination):
    """Bets newest first by ``(placed_at, id)``, 20 a page by default; the page also carries
    ``totals`` (set by the view: null unless ``totals=true``)."""

    ordering = ("placed_at", "id")
    page_size = 20
    fetch = staticmethod(values_rows)  # a prepared statement on PostgreSQL: planned once per shape

    def get_paginated_response_schema(self, schema):
        page = super().get_paginated_response_schema(schema)
        amount = s.AMOUNT_SCHEMA
        page["required"].append("totals")
        page["properties"]["totals"] = {
            "type": "array", "nullable": True, "example": None,
            "description": "With `totals=true`: per currency, over every bet the filters select (all pages): "
                           "count, staked, returned and net over the settled (or refunded) bets only, the open "
                           "bets apart (open_count, open_staked); otherwise null.",
            "items": {"type": "object", "required": ["currency", "count", "staked", "returned", "net", "open_count",
                                                     "open_staked"],
                      "properties": {"currency": {"type": "string"}, "count": {"type": "integer"},
                                     "staked": amount, "returned": amount, "net": amount,
                                     "open_count": {"type": "integer"}, "open_staked": amount}}}
        return page


class BetList:
    """A bet list view (mixed in before its API's base view): ``list_bets()`` answers a page of
    ``get_queryset()`` (value rows, filtered by ``filterset_class``; without a filter
    ``unfiltered_page()``, which a view may read another way; each row shown by ``row``) and, with
    ``totals=true``, the totals of ``bets()`` under the same filters (``totals``)."""

    filter_backends = [DjangoFilterBackend]
    filterset_class = BetFilter
    pagination_class = BetPagination
    queryset = Bet.objects.none()  # the model, for the schema and the cursor; rows: get_queryset

    def bets(self):
        """The bets listed: a ``wagering.selectors`` ``Bet`` queryset with ``with_money``."""
        raise NotImplementedError

    def get_queryset(self):
        """The value rows of ``bets()`` (``wagering.selectors.BET_ROW`` at least)."""
        raise NotImplementedError

    def unfiltered_page(self):
        """The requested page of ``get_queryset()`` when no filter is given."""
        return self.paginate_queryset(self.get_queryset())

    def row(self, row, zone):
        """``row`` of ``get_queryset()`` as the list shows it in time zone ``zone``."""
        return s.bet_row(row, zone)

    def totals(self, apply, filters):
        """The ``[Totals]`` of ``bets()`` filtered by ``apply`` (``filters``: the cleaned values):
        from the bets themselves (a player's own bets, on their index; the rows' joins would slow
        the scan)."""
        return bet_totals(apply(self.bets()))

    def list_bets(self):
        apply, filters = self.filters()
        zone = ZoneInfo(filters.get("tz") or "UTC")
        rows = self.paginate_queryset(apply(self.get_queryset())) if filters else self.unfiltered_page()
        page = [self.row(row, zone) for row in rows]
        totals = s.TotalsSerializer(self.totals(apply, filters), many=True).data if filters.get("totals") else None
        response = self.get_paginated_response(page)
        response.data["totals"] = totals
        return response
