"""The Bet Record: every bet, searchable, with a page per bet, and a CSV export of any search.
Read-only: bets change only through the wagering and settlement services. ``settlement.admin``
completes a bet's page with what a dispute needs (its replay, ledger entries, audit trail)."""

from django.contrib import admin
from django.db.models import Q
from django.utils import timezone

from accounts.models import Player
from accounts.scoping import OperatorScoped
from adminkit.base import ReadOnlyAdmin, ReadOnlyInline
from adminkit.export import CsvExportMixin
from adminkit.filters import AmountRangeFilter, DateRangeFilter, InputFilter, operator_zone, parse_id
from adminkit.money import format_money
from adminkit.paginator import LookaheadPaginatorMixin

from .models import Bet, BetExtra
from .selectors import CSV_HEADER, bets_for_csv, with_money


class BetSearchFilter(InputFilter):
    """Search by player (the start of a player code or game code, in any case: ``demo-real-000``
    finds ``DEMO-REAL-0001``'s bets), bet (id or record id), round (id, external id, or
    ``TABLE-CODE/external id``: external ids repeat across tables) or table code (exactly). An id
    too large for the database is refused with a message."""

    title = "search"
    inputs = [("player", "Player code (start)", "text"), ("bet", "Bet id", "text"),
              ("round", "Round", "text"), ("table", "Table code", "text")]

    def filter(self, queryset, values):
        if "player" in values:
            start = values["player"]
            players = Player.objects.filter(Q(code__istartswith=start) | Q(game_code__istartswith=start))
            queryset = queryset.filter(player__in=players)
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
class BetAdmin(OperatorScoped, CsvExportMixin, LookaheadPaginatorMixin, ReadOnlyAdmin):
    """Bet Record list (bounded queries, no COUNT) and bet page. The list fits 1600 px: variant is a
    filter only, the seat goes with the type, money in the bet's currency (US format, its minor
    units), times to the second in the operator's zone. Operator staff see their players' bets."""

    operator_path = "player__operator"
    export_filename, export_header = "bet-record.csv", CSV_HEADER

    list_display = ("id", "placed", "player", "round_link", "type_seat", "staked_shown", "returned_shown",
                    "net_shown", "currency", "state", "outcome")
    list_select_related = ("player", "round", "table", "currency")
    list_filter = (BetSearchFilter, PlacedFilter, StakeFilter, ("table__variant", admin.ChoicesFieldListFilter),
                   "type", "state", OutcomeFilter)
    ordering = ("-placed_at", "-id")
    list_per_page = 50
    inlines = [BetExtraInline]
    change_list_template = "admin/wagering/bet/change_list.html"
    change_form_template = "admin/wagering/bet/change_form.html"
    readonly_fields = ("round_link", "stake_shown", "staked_shown", "returned_shown", "net_shown", "placed")
    fields = ("round_link", "player", "table", "currency", "type", "seat", "record_id", "stake_shown", "staked_shown",
              "state", "outcome", "returned_shown", "net_shown", "placed", "settled_at", "idempotency_key")

    def get_queryset(self, request):
        # the list shows the round's id only; money with the extra stakes (``with_money``)
        return with_money(super().get_queryset(request).defer("round__record"))

    def get_object(self, request, object_id, from_field=None):
        # the page: the round (with its table, currency and shoe: the replay uses them), player,
        # table and currency in the bet's one query
        queryset = self.scope(request, with_money(Bet.objects.select_related(
            "round__table__currency", "round__shoe", "player", "table", "currency")))
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

    @admin.display(description="stake (original)", ordering="stake")
    def stake_shown(self, bet):
        return format_money(bet.stake, bet.currency)

    @admin.display(description="staked")
    def staked_shown(self, bet):
        """The stake and every extra stake (double, split, insurance, follows)."""
        return format_money(bet.staked, bet.currency)

    @admin.display(description="returned")
    def returned_shown(self, bet):
        """Everything credited back (a refunded bet: all it staked); blank while open."""
        return format_money(bet.returned_total, bet.currency)

    @admin.display(description="net")
    def net_shown(self, bet):
        """Returned - staked: the player's result (negative: the player lost); blank while open."""
        return format_money(bet.net, bet.currency)

    def export_rows(self, queryset):
        """``wagering.selectors.CSV_HEADER``'s columns: staked with the extra stakes, returned, net,
        outcome, operator."""
        return bets_for_csv(queryset)

    def changelist_view(self, request, extra_context=None):
        zone = operator_zone(request)
        extra_context = {**(extra_context or {}), "operator_zone": zone}
        with timezone.override(zone):
            response = super().changelist_view(request, extra_context)
            if hasattr(response, "render"):
                response.render()
        return response

    def change_view(self, request, object_id, form_url="", extra_context=None):
        bet = self.get_object(request, object_id)
        if bet is not None:
            extra_context = {**(extra_context or {}),
                             "subtitle": f"{bet.type} {format_money(bet.staked, bet.currency, code=True)} "
                                         f"({bet.record_id})"}
        return super().change_view(request, object_id, form_url, extra_context)
