"""The Bet Record: every bet, searchable, with a page per bet, and a CSV export of any search.
Read-only: bets change only through the wagering and settlement services. ``settlement.admin``
completes a bet's page with what a dispute needs (its replay, ledger entries, audit trail)."""

import csv
from datetime import datetime

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ERROR_FLAG
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import HttpResponseRedirect, StreamingHttpResponse
from django.urls import path, reverse
from django.utils import timezone

from accounts.scoping import OperatorScoped
from adminkit.base import ReadOnlyAdmin, ReadOnlyInline
from adminkit.filters import AmountRangeFilter, DateRangeFilter, InputFilter, operator_zone, parse_id
from adminkit.money import format_money
from adminkit.paginator import LookaheadPaginatorMixin

from .models import Bet, BetExtra
from .selectors import CSV_COLUMNS, bets_for_csv


class BetSearchFilter(InputFilter):
    """Exact search by player code, bet (id or record id), round (id, external id, or
    ``TABLE-CODE/external id``: external ids repeat across tables) or table code. An id too large
    for the database is refused with a message."""

    title = "search"
    inputs = [("player", "Player code", "text"), ("bet", "Bet id", "text"),
              ("round", "Round", "text"), ("table", "Table code", "text")]

    def filter(self, queryset, values):
        if "player" in values:
            queryset = queryset.filter(Q(player__code=values["player"]) | Q(player__game_code=values["player"]))
        if "bet" in values:
            bet = values["bet"]
            if bet.isdigit():
                if parse_id(bet) is None:
                    self.reject(self.request, "Bet id", bet, "no such id")
                    return queryset.none()
                queryset = queryset.filter(pk=parse_id(bet))
            else:
                queryset = queryset.filter(record_id=bet)
        if "round" in values:
            queryset = self.filter_round(queryset, values["round"])
        if "table" in values:
            queryset = queryset.filter(table__code=values["table"])
        return queryset

    def filter_round(self, queryset, rnd):
        if "/" in rnd:
            code, external_id = rnd.rsplit("/", 1)
            return queryset.filter(table__code=code.strip(), round__external_id=external_id.strip())
        if rnd.isdigit():
            if parse_id(rnd) is None:
                self.reject(self.request, "Round", rnd, "no such id")
                return queryset.none()
            return queryset.filter(round_id=parse_id(rnd))
        return queryset.filter(round__external_id=rnd)


class PlacedFilter(DateRangeFilter):
    title = "date placed (operator time zone)"
    field = "placed_at"
    inputs = [("placed_from", "From", "date"), ("placed_to", "To", "date")]


class StakeFilter(AmountRangeFilter):
    title = "stake"
    field = "stake"
    inputs = [("stake_min", "Min", "number"), ("stake_max", "Max", "number")]


class OutcomeFilter(admin.SimpleListFilter):
    """Settled outcome (``Bet.OUTCOMES``)."""

    title = "outcome"
    parameter_name = "outcome"

    def lookups(self, request, model_admin):
        return [(o, o) for o in Bet.OUTCOMES]

    def queryset(self, request, queryset):
        return queryset.filter(outcome=self.value()) if self.value() else queryset


class BetExtraInline(OperatorScoped, ReadOnlyInline):
    operator_path = "bet__player__operator"
    model = BetExtra
    fields = ("kind", "hand", "amount_shown", "key", "created_at")
    readonly_fields = ("amount_shown",)
    show_change_link = False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("bet__currency").defer("bet__idempotency_key")

    @admin.display(description="amount")
    def amount_shown(self, extra):
        return format_money(extra.amount, extra.bet.currency)


@admin.register(Bet)
class BetAdmin(OperatorScoped, LookaheadPaginatorMixin, ReadOnlyAdmin):
    """Bet Record list (bounded queries, no COUNT) and bet page. The list fits 1600 px: variant is a
    filter only, the seat goes with the type, money in the bet's currency (US format, its minor
    units), times to the second in the operator's zone. Operator staff see their players' bets."""

    operator_path = "player__operator"

    list_display = ("id", "placed", "player", "round_link", "type_seat", "stake_shown", "returned_shown",
                    "currency", "state", "outcome")
    list_select_related = ("player", "round", "table", "currency")
    list_filter = (BetSearchFilter, PlacedFilter, StakeFilter, ("table__variant", admin.ChoicesFieldListFilter),
                   "type", "state", OutcomeFilter)
    ordering = ("-placed_at", "-id")
    list_per_page = 50
    inlines = [BetExtraInline]
    change_list_template = "admin/wagering/bet/change_list.html"
    change_form_template = "admin/wagering/bet/change_form.html"
    readonly_fields = ("round_link", "stake_shown", "returned_shown", "placed")
    fields = ("round_link", "player", "table", "currency", "type", "seat", "record_id", "stake_shown", "state",
              "outcome", "returned_shown", "placed", "settled_at", "idempotency_key")

    def get_queryset(self, request):
        return super().get_queryset(request).defer("round__record")  # the list shows the round's id only

    def get_object(self, request, object_id, from_field=None):
        # the page: the round (with its table, currency and shoe: the replay uses them), player,
        # table and currency in the bet's one query
        queryset = self.scope(request, Bet.objects.select_related("round__table__currency", "round__shoe", "player",
                                                                  "table", "currency"))
        cache = request.__dict__.setdefault("_admin_objects", {})
        key = (self.model._meta.label, str(object_id), from_field)
        if key not in cache:
            try:
                cache[key] = queryset.get(pk=int(object_id))
            except (ValueError, OverflowError, Bet.DoesNotExist):
                cache[key] = None
        return cache[key]

    @admin.display(description="placed", ordering="placed_at")
    def placed(self, bet):
        return timezone.localtime(bet.placed_at).strftime("%Y-%m-%d %H:%M:%S") if bet.placed_at else ""

    @admin.display(description="round")
    def round_link(self, bet):
        return f"{bet.table.code}/{bet.round.external_id}"

    @admin.display(description="type", ordering="type")
    def type_seat(self, bet):
        return f"{bet.type} · seat {bet.seat}" if bet.seat else bet.type

    @admin.display(description="stake", ordering="stake")
    def stake_shown(self, bet):
        return format_money(bet.stake, bet.currency)

    @admin.display(description="returned", ordering="returned")
    def returned_shown(self, bet):
        return format_money(bet.returned, bet.currency)

    def get_urls(self):
        return [path("export.csv", self.admin_site.admin_view(self.export_csv),
                     name="wagering_bet_export")] + super().get_urls()

    def export_csv(self, request):
        """The current search as CSV, streamed (``.iterator``): the rows never all sit in memory.
        A query the list itself refuses (an unknown field, a malformed lookup) goes back to the
        list's "?e=1" page, as the list does."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            queryset = self.get_changelist_instance(request).queryset
        except IncorrectLookupParameters:
            return HttpResponseRedirect(f"{reverse('admin:wagering_bet_changelist')}?{ERROR_FLAG}=1")
        zone = operator_zone(request)

        class Echo:
            def write(self, value):
                return value

        writer = csv.writer(Echo())

        def rows():
            yield writer.writerow([name for name, _ in CSV_COLUMNS])
            for row in bets_for_csv(queryset):
                yield writer.writerow([timezone.localtime(v, zone).isoformat() if isinstance(v, datetime) else v
                                       for v in row])

        response = StreamingHttpResponse(rows(), content_type="text/csv")
        response["Content-Disposition"] = 'attachment; filename="bet-record.csv"'
        return response

    def changelist_view(self, request, extra_context=None):
        search = request.GET.copy()
        search.pop("p", None)
        zone = operator_zone(request)
        extra_context = {**(extra_context or {}), "export_query": search.urlencode(), "operator_zone": zone}
        with timezone.override(zone):
            response = super().changelist_view(request, extra_context)
            if hasattr(response, "render"):
                response.render()
        return response

    def change_view(self, request, object_id, form_url="", extra_context=None):
        bet = self.get_object(request, object_id)
        if bet is not None:
            extra_context = {**(extra_context or {}),
                             "subtitle": f"{bet.type} {format_money(bet.stake, bet.currency, code=True)} "
                                         f"({bet.record_id})"}
        return super().change_view(request, object_id, form_url, extra_context)
