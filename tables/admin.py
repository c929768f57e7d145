"""Operator pages of tables (limits, pay tables, status, penetration, suspend limit, with the
variant's defaults from the engine, the theoretical RTP per bet type with a preview of edited pay
tables) and rounds (list by table, state, date, shoe). ``settlement.admin`` completes both: a
table's open RTP-watch alerts, a round's replay with the void and resettle actions."""

import json

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.exceptions import PermissionDenied
from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.urls import path
from django.utils.decorators import method_decorator
from django.utils.html import format_html, format_html_join
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import TokenProxy
from rest_framework_api_key.admin import APIKeyModelAdmin

from accounts.scoping import PROVIDER, SHARED, OperatorScoped
from adminkit.base import AddressedBy, ReadOnlyAdmin, ReadOnlyInline, RequestCachedObjectMixin

from . import rtp
from .models import Round, RoundEvent, Seat, Shoe, Studio, StudioAgreement, StudioAPIKey, Table, TableLimit
from .pay_tables_form import PayTablesField
from .tasks import compute_table_rtp

# DRF's token page would list every token's raw key: player API tokens (demo and tests) are not
# administered on a page; game servers' keys are hashed (``StudioAPIKey``).
if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)


@admin.register(Studio)
class StudioAdmin(OperatorScoped, admin.ModelAdmin):
    """The studios whose game servers deal the tables: the provider's (no operator's page)."""

    operator_path = PROVIDER
    list_display = ("code", "name", "created_at")
    search_fields = ("code", "name")

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(StudioAgreement)
class StudioAgreementAdmin(OperatorScoped, admin.ModelAdmin):
    """Which operators' players may bet at which studio's tables: the provider's (no operator's
    page). Adding one lets the studio's game server bet for the operator's players in session;
    deleting it ends that (the bets placed stay and settle)."""

    operator_path = PROVIDER
    list_display = ("studio", "operator", "created_at")
    list_filter = ("studio", "operator")
    list_select_related = ("studio", "operator")
    fields = ("studio", "operator")

    def get_readonly_fields(self, request, obj=None):
        return (*super().get_readonly_fields(request, obj), *(("studio", "operator") if obj is not None else ()))


@admin.register(StudioAPIKey)
class StudioAPIKeyAdmin(OperatorScoped, AddressedBy, APIKeyModelAdmin):
    """Game-server service accounts, the provider's, named by their prefix (the primary key holds
    the hash, never shown): the key is shown once, when created (the library's message); only its
    prefix afterwards; revocation is for good. The signing secret is on no page (``manage.py
    create_game_server_key --signed`` prints it once)."""

    operator_path = PROVIDER
    url_field = "prefix"
    list_display = ("prefix", "name", "studio", "created", "expiry_date", "_has_expired", "revoked", "signed")
    list_filter = ("studio", "revoked")
    list_select_related = ("studio",)
    fields = ("studio", "name", "prefix", "expiry_date", "revoked")

    @admin.display(boolean=True, description="signs its requests")
    def signed(self, key):
        return bool(key.signing_secret)

    def get_readonly_fields(self, request, obj=None):
        return (*super().get_readonly_fields(request, obj), *(("studio",) if obj is not None else ()))


class TableLimitInline(OperatorScoped, admin.TabularInline):
    operator_path = SHARED
    model = TableLimit
    extra = 0


class SeatInline(OperatorScoped, ReadOnlyInline):
    """The seats; operator staff see those their players sit on."""

    operator_path = "player__operator"
    model = Seat
    fields = ("number", "player", "rounds_without_bet")
    show_change_link = False


@admin.register(Table)
class TableAdmin(OperatorScoped, admin.ModelAdmin):
    """Table configuration (administrators edit it; roles and operator staff only view: tables are
    every operator's). Pay-table overrides are checked by the engine (``Table.clean``); the
    variant's defaults are shown beside them, with the exact RTP per bet type (``tables.rtp``:
    recomputed by a task after each save, previewed before)."""

    operator_path = SHARED

    list_display = ("code", "name", "studio", "variant", "currency", "status", "penetration", "suspend_limit_seconds",
                     "seats")
    list_filter = ("studio", "variant", "status", "currency")
    search_fields = ("code", "name")
    inlines = [TableLimitInline, SeatInline]
    readonly_fields = ("effective_pay_tables", "variant_defaults", "theoretical_rtp")
    fieldsets = [
        (None, {"fields": ("code", "name", "studio", "variant", "currency", "status", "seats")}),
        ("Shoe and suspension", {"fields": ("penetration", "suspend_limit_seconds")}),
        ("Pay tables", {"fields": ("pay_tables", "effective_pay_tables", "variant_defaults"),
                        "description": "A change applies to the rounds opened after it: each round keeps the "
                                       "odds it opened with, for its settlement, resettles and replay."}),
        ("Return to player", {"fields": ("theoretical_rtp",)}),
    ]
    change_form_template = "admin/tables/table/change_form.html"

    def has_delete_permission(self, request, obj=None):
        return False

    def get_form(self, request, obj=None, change=False, **kwargs):
        """The form, its ``pay_tables`` edited as odds per pattern of the table's variant
        (``tables.pay_tables_form``) where the user may change them."""
        form = super().get_form(request, obj, change, **kwargs)
        if "pay_tables" not in form.base_fields:
            return form
        field = PayTablesField(variant=obj.variant if obj is not None else None,
                               label="pay-table overrides (odds per pattern)")
        return type(form.__name__, (form,), {"pay_tables": field})

    def get_readonly_fields(self, request, obj=None):
        """A table with rounds shows its ``Table.FIXED_ONCE_PLAYED`` fields read-only."""
        fixed = Table.FIXED_ONCE_PLAYED if obj is not None and obj.rounds.exists() else ()
        return (*super().get_readonly_fields(request, obj), *fixed)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        compute_table_rtp.delay_on_commit(obj.pk)

    def get_urls(self):
        return [path("<int:table_id>/rtp-preview/", self.admin_site.admin_view(self.rtp_preview),
                     name="tables_table_rtp_preview")] + super().get_urls()

    @admin.display(description="theoretical RTP (exact)")
    def theoretical_rtp(self, table):
        if table.pk is None:
            return "shown once the table is saved"
        try:
            rules = table.rules()
        except ValueError as e:
            return f"invalid overrides: {e}"
        rep = rtp.stored_report(rules)
        if rep is None:
            # nothing queued it yet (e.g. tables created by ``make run``'s seed): queue it, never
            # compute it here (the exact main-game RTP takes seconds)
            compute_table_rtp.delay_on_commit(table.pk)
            return ("not computed yet: its computation is queued (a Celery worker computes it once per rule "
                    "set and stores it); reload in a little while")
        return _rtp_html(rtp.rtp_by_bet_type(rules, rep))

    @method_decorator(require_POST)
    def rtp_preview(self, request, table_id):
        """``POST <table>/rtp-preview/`` with ``pay_tables`` (the form's JSON overrides): the exact
        RTP per bet type those pay tables would give, as ``{"html": ...}`` (400 ``{"error": ...}``
        for overrides the engine refuses). Side bets are instant; the main game is memoised per
        variant in the process."""
        from tables.engine import ruleset

        table = get_object_or_404(Table, pk=table_id)
        if not self.has_change_permission(request, table):
            raise PermissionDenied
        try:
            rep = rtp.preview_report(table.variant, json.loads(request.POST.get("pay_tables") or "{}"))
        except ValueError as e:  # bad JSON (JSONDecodeError) or overrides the engine refuses
            return JsonResponse({"error": str(e)}, status=400)
        return JsonResponse({"html": _rtp_html(rtp.rtp_by_bet_type(ruleset(table.variant), rep))})

    @admin.display(description="pay tables in force (N:1)")
    def effective_pay_tables(self, table):
        try:
            rules = table.rules()
        except ValueError as e:
            return f"invalid overrides: {e}"
        return _pay_tables_html(rules.pay_tables)

    @admin.display(description="variant defaults (engine RuleSet)")
    def variant_defaults(self, table):
        from tables.engine import ruleset

        rules = ruleset(table.variant)
        facts = [("decks", rules.decks), ("seats", rules.seats or "unlimited"), ("hole card", rules.hole_card),
                 ("peek", rules.peek), ("dealer stands on soft 17", rules.dealer_stands_soft_17),
                 ("double fallback", rules.double_fallback), ("bet behind", rules.bet_behind),
                 ("bet types", ", ".join(sorted(rules.bet_types))),
                 ("side bets last shoe round", dict(rules.last_shoe_round) or "none"),
                 ("published max RTP", f"{rules.max_rtp}%")]
        return format_html("<dl>{}</dl>{}", format_html_join("", "<dt>{}</dt><dd>{}</dd>", facts),
                           _pay_tables_html(rules.pay_tables))


def _rtp_html(rows):
    return format_html("<table><tr><th>bet</th><th>RTP</th><th>house edge</th></tr>{}</table>",
                       format_html_join("", "<tr><td>{}</td><td>{}%</td><td>{}%</td></tr>",
                                        ((bet, f"{100 * r:.3f}", f"{100 * (1 - r):.3f}") for bet, r in rows)))


def _pay_tables_html(pay_tables):
    rows = ((bet_type, pattern, odds) for bet_type, table in pay_tables.items() for pattern, odds in table.items())
    return format_html("<table><tr><th>bet</th><th>pattern</th><th>odds</th></tr>{}</table>",
                       format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}:1</td></tr>", rows))


class ShoeFilter(admin.SimpleListFilter):
    """Rounds of one shoe (``?shoe=<id>``; the link from a shoe's round count); an id that is no
    number of at most 18 digits is the admin's invalid-lookup answer (``IncorrectLookupParameters``)."""

    title = "shoe"
    parameter_name = "shoe"

    def lookups(self, request, model_admin):
        shoe = self.value()
        return [(shoe, f"shoe #{shoe}")] if shoe else []

    def queryset(self, request, queryset):
        shoe = self.value()
        if not shoe:
            return queryset
        if not (shoe.isascii() and shoe.isdigit() and len(shoe) <= 18):
            raise IncorrectLookupParameters(f"shoe {shoe[:32]!r} is no shoe id")
        return queryset.filter(shoe_id=int(shoe))


@admin.register(Round)
class RoundAdmin(OperatorScoped, RequestCachedObjectMixin, ReadOnlyAdmin):
    """Rounds by table, state, date and shoe. A round is named ``TABLE-CODE/external id``; the
    search takes that form or the external id. Rounds are shared: operator staff see those with
    a bet of their players."""

    operator_path = "bets__player__operator"

    list_display = ("round_name", "table", "shoe_link", "shoe_round", "state", "opened_at", "settled_at")
    list_select_related = ("table", "shoe")
    list_filter = ("state", "table__variant", "table", ShoeFilter)
    date_hierarchy = "opened_at"
    search_fields = ("=external_id",)
    search_help_text = "External id (R000018) or TABLE-CODE/external id."
    ordering = ("-opened_at", "-id")
    show_full_result_count = False
    change_form_template = "admin/tables/round/change_form.html"
    readonly_fields = ("shoe_shown",)
    fields = ("table", "shoe_shown", "shoe_round", "external_id", "state", "failure_reason", "opened_at", "closed_at",
              "suspended_at", "cancelled_at", "resulted_at", "settled_at", "voided_at")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("table__currency", "shoe__table")

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if "/" in term:
            code, external_id = term.rsplit("/", 1)
            return queryset.filter(table__code=code.strip(), external_id=external_id.strip()), False
        return super().get_search_results(request, queryset, search_term)

    @admin.display(description="round", ordering="external_id")
    def round_name(self, round_):
        return round_.title

    @admin.display(description="shoe")
    def shoe_shown(self, round_):
        return round_.shoe.title

    @admin.display(description="shoe", ordering="shoe__sequence")
    def shoe_link(self, round_):
        return format_html('<a href="?shoe={}">{}</a>', round_.shoe_id, round_.shoe.sequence)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        round_ = self.get_object(request, object_id)
        if round_ is not None:
            extra_context = {**(extra_context or {}), "subtitle": round_.title}
        return super().change_view(request, object_id, form_url, extra_context)


@admin.register(Shoe)
class ShoeAdmin(OperatorScoped, ReadOnlyAdmin):
    operator_path = SHARED
    list_display = ("shoe_name", "table", "sequence", "shuffled_at", "burn_count", "rounds_dealt", "cut_card_out")
    list_filter = ("table", "cut_card_out")
    list_select_related = ("table",)

    @admin.display(description="shoe", ordering="sequence")
    def shoe_name(self, shoe):
        return shoe.title


class RoundColumnMixin:
    """For the list of a model with a ``round`` foreign key (events, alerts, corrections): a
    "round" column (table and round number) and a query that leaves the rounds' records unread
    (large JSON; add ``round__table`` to ``list_select_related``)."""

    def get_queryset(self, request):
        return super().get_queryset(request).defer("round__record")

    @admin.display(description="round")
    def round_name(self, obj):
        return obj.round.title if obj.round_id else ""


@admin.register(RoundEvent)
class RoundEventAdmin(OperatorScoped, RoundColumnMixin, ReadOnlyAdmin):
    """Every timeline event; ``?round=<id>`` lists one round's (the link from a round page, which
    shows only the latest ``settlement.replay.MAX_EVENTS``). The provider's: a shared round's
    timeline names every operator's players and bets."""

    operator_path = PROVIDER

    list_display = ("round_name", "kind", "actor", "created_at")
    list_filter = ("kind",)
    list_select_related = ("round__table",)
    show_full_result_count = False
    ordering = ("-id",)


@admin.register(Seat)
class SeatAdmin(OperatorScoped, ReadOnlyAdmin):
    operator_path = "player__operator"
