"""The Bet Record: every bet, searchable, with a page per bet, and a CSV export of any search; and
the reports (the rollups by day, table, operator or currency, the observed RTP).
Read-only: bets change only through the wagering and settlement services. ``settlement.admin``
completes a bet's page with what a dispute needs (its replay, ledger entries, audit trail)."""

import csv
from datetime import timedelta
from decimal import Decimal
from io import StringIO

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone

from accounts.models import Currency, Operator, Player
from accounts.scoping import OperatorScoped, is_provider, operator_id_of
from adminkit.base import ReadOnlyAdmin, ReadOnlyInline
from adminkit.export import CsvExportMixin
from adminkit.filters import AmountRangeFilter, DateRangeFilter, InputFilter, operator_zone, parse_id
from adminkit.money import format_money
from adminkit.paginator import LookaheadPaginatorMixin
from tables.models import Table
from tables.rtp import expected_rtp, stored_report

from .models import Bet, BetExtra, DailyRollup
from .reports import GROUPS, Selection, daily_money, default_first_day, money_chart, report, rtp_series
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


# --- reports (the rollups: wagering.reports; docs/reports.md) ---------------------------------------

class ReportForm(forms.Form):
    """The report's selection. Dates are days of each operator's zone; bad input is a form error."""

    date_from = forms.DateField(required=False, label="from", widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, label="to", widget=forms.DateInput(attrs={"type": "date"}))
    group = forms.ChoiceField(choices=[(g, g) for g in GROUPS], required=False, initial="day", label="by")
    operator = forms.ModelChoiceField(queryset=Operator.objects.order_by("code"), required=False,
                                      to_field_name="code")
    table = forms.CharField(required=False, max_length=32)
    currency = forms.CharField(required=False, max_length=8)

    def clean(self):
        data = super().clean()
        if data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
            raise forms.ValidationError("“from” is after “to”")
        return data


def _report_zone(request):
    """The zone of the report's default days: operator staff's operator's, else the operator site's."""
    operator_id = operator_id_of(request)
    if operator_id is not None:
        return Operator.objects.get(pk=operator_id).time_zone
    return operator_zone(request)


#: The report's chart shows at most the last this many days of its range.
MAX_CHART_DAYS = 366
#: The report's columns: (header, ReportRow attribute, money).
REPORT_COLUMNS = [("rounds", "rounds", False), ("bets", "bets", False), ("players", "players", False),
                  ("turnover", "turnover", True), ("returned", "returned", True), ("GGR", "ggr", True),
                  ("hold %", "hold", False), ("refunded bets", "refunded_bets", False), ("refunded", "refunded", True),
                  ("adjustments", "adjustments", False), ("adjusted", "adjusted", True)]


def _cells(row, currency):
    """``(group key, currency code, [cell texts])`` of a ``ReportRow`` as the report shows it."""
    cells = []
    for _, attribute, money in REPORT_COLUMNS:
        value = getattr(row, attribute)
        cells.append("—" if value is None else format_money(value, currency) if money else f"{value:,}")
    return row.key, row.currency, cells


@admin.register(DailyRollup)
class ReportAdmin(OperatorScoped, ReadOnlyAdmin):
    """The reports: rollups by day, table, operator or currency over a date range, with a totals
    row per currency, a chart of turnover and GGR per day, and a CSV of the same rows; the
    observed RTP beside the theoretical one per table and bet type over time (``rtp/``). Operator
    staff see only their operator's rows (``accounts.scoping``: ``operator_path``)."""

    operator_path = "operator"

    def get_urls(self):
        view = self.admin_site.admin_view
        return [path("rtp/", view(self.rtp_view), name="wagering_dailyrollup_rtp")] + super().get_urls()

    def _selection(self, request):
        """``(form, Selection, group)`` of the request's query (the last 30 days by day by default)."""
        form = ReportForm(request.GET or None)
        today = timezone.localtime(timezone.now(), _report_zone(request)).date()
        data = form.cleaned_data if form.is_valid() else {}
        day_to = data.get("date_to") or today
        day_from = data.get("date_from") or default_first_day(day_to)
        operator = data.get("operator") if is_provider(request) else None
        selection = Selection(day_from=day_from, day_to=day_to, operator_id=operator.pk if operator else None,
                              table=data.get("table") or None, currency=data.get("currency") or None,
                              scope=operator_id_of(request))
        return form, selection, data.get("group") or "day"

    def changelist_view(self, request, extra_context=None):
        if not self.has_view_permission(request):
            raise PermissionDenied
        form, selection, group = self._selection(request)
        rows, totals = report(selection, group)
        currencies = Currency.objects.in_bulk({r.currency for r in rows + totals})
        if request.GET.get("format") == "csv":
            return self._csv(rows, totals, group, currencies)
        span = min((selection.day_to - selection.day_from).days + 1, MAX_CHART_DAYS)
        chart = money_chart(daily_money(selection), [selection.day_to - timedelta(days=n)
                                                     for n in range(span - 1, -1, -1)])
        query = request.GET.copy()
        query["format"] = "csv"
        context = {**self.admin_site.each_context(request), "title": "Reports", "form": form, "group": group,
                   "selection": selection, "headers": [h for h, _, _ in REPORT_COLUMNS],
                   "rows": [_cells(r, currencies[r.currency]) for r in rows],
                   "totals": [_cells(r, currencies[r.currency]) for r in totals],
                   "chart": chart, "csv_query": query.urlencode(), "opts": self.model._meta,
                   "provider": is_provider(request)}
        return TemplateResponse(request, "admin/wagering/dailyrollup/report.html", context)

    @staticmethod
    def _csv(rows, totals, group, currencies):
        """The report's rows then its totals as CSV (amounts as plain decimal strings with the
        currency's minor units)."""
        out = StringIO()
        writer = csv.writer(out)
        writer.writerow([group, "currency"] + [header for header, _, _ in REPORT_COLUMNS])
        for label, row in [(r.key, r) for r in rows] + [("total", r) for r in totals]:
            quantum = Decimal(1).scaleb(-currencies[row.currency].minor_units)
            values = [getattr(row, a) for _, a, _ in REPORT_COLUMNS]
            writer.writerow([label, row.currency] + ["" if v is None else v.quantize(quantum) if money else v
                                                     for v, (_, _, money) in zip(values, REPORT_COLUMNS)])
        response = HttpResponse(out.getvalue(), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="report-by-{group}.csv"'
        return response

    def rtp_view(self, request):
        """Observed RTP per table and bet type, per day, beside the theoretical figure of the
        table's rules (``tables.rtp``: stored reports only, never computed on a page load)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        form, selection, _ = self._selection(request)
        series = rtp_series(selection)
        tables = {t.code: t for t in Table.objects.filter(code__in={code for code, _ in series})}
        lines, charts = [], []
        for (code, bet_type), points in sorted(series.items()):
            rep = stored_report(tables[code].rules())
            expected = expected_rtp(rep, bet_type) if rep else None
            staked = sum(p[1] for p in points)
            observed = sum(p[2] for p in points) / staked if staked else None
            lines.append({"table": code, "bet_type": bet_type, "bets": sum(p[3] for p in points),
                          "observed": observed, "expected": expected})
            name = f"rtp-{code}-{bet_type}"
            charts.append({"id": name, "data_id": f"{name}-data", "title": f"{code} {bet_type}", "config": {
                "type": "line", "labels": [str(p[0]) for p in points], "datasets": [
                    {"label": "observed RTP %", "data": [float(100 * p[2] / p[1]) if p[1] else None
                                                          for p in points]},
                    {"label": "theoretical RTP %", "data": [100 * expected if expected else None] * len(points)}]}})
        context = {**self.admin_site.each_context(request), "title": "Observed RTP", "form": form,
                   "selection": selection, "lines": lines, "charts": charts, "opts": self.model._meta,
                   "provider": is_provider(request)}
        return TemplateResponse(request, "admin/wagering/dailyrollup/rtp.html", context)
