"""Operator pages of settlement: the dispute queue (oldest first, by status and assignee) and a
dispute's page with the round replay beside it (assign, notes, resolve through
``settlement.disputes``); alerts, corrections, bet settlements and the audit trail, read-only.

And the pages of the floors below that show what only settlement knows, completed here
(``adminkit.base.replace_page``): a player's bets and disputes, a wallet's manual adjustment and
audit trail, a table's open RTP-watch alerts, a round's replay with the void and resettle actions,
a bet's replay, ledger entries and audit trail, a seamless wallet movement's audit trail and a
Supervisor's retry, and the wallet console's open ``wallet_failing`` alerts. The action views are
``settlement.actions``.

Every page declares its ``operator_path`` (``accounts.scoping``): operator staff see their
players' disputes, alerts and audit rows, and of a shared round only their players' bets (a
partial replay, ``replay_bets``); corrections and settlement details, which hold every
operator's bets of a round, are the provider's."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.http import StreamingHttpResponse
from django.urls import path
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator
from django.utils.timesince import timesince

from accounts.admin import PAGE_ROWS
from accounts.exceptions import PlatformError
from accounts.models import Account, Player
from accounts.scoping import PROVIDER, OperatorScoped, is_provider, operator_id_of, visible
from adminkit.base import ReadOnlyAdmin, ReadOnlyInline, replace_page
from adminkit.export import CsvExportMixin
from adminkit.filters import DateRangeFilter
from adminkit.money import format_money
from tables.admin import RoundAdmin, RoundColumnMixin, TableAdmin
from tables.models import Round, Table
from wagering.admin import BetAdmin
from wagering.models import Bet
from wagering.selectors import bets_for_player, with_money
from wallets.admin import AccountBalancePage, PlayerBalancesPage, WalletMovementAdmin
from wallets.models import WalletMovement
from wallets.outbox import retry_refusal

from . import actions, audit, exception_report
from .adjustments import approve_adjustment
from .alerts import acknowledge_alerts
from .audit import require_reason
from .exceptions import ReasonRequired
from .models import (
    Adjustment,
    Alert,
    Dispute,
    DisputeNote,
    ExceptionEntry,
    OperatorAction,
    RoundCorrection,
    SettlementDetail,
)
from .replay import build_replay
from .selectors import audit_trail, bet_ledger_entries, with_amount_at_stake


def replay_bets(request):
    """The bets a round replay shows ``request.user`` (``build_replay``'s ``bets``): all (None) for
    the provider's staff, their operator's players' for operator staff."""
    return None if is_provider(request) else visible(request, Bet.objects.all())


def audit_rows(request):
    """The audit rows ``request.user`` sees (``audit_trail``'s ``among``)."""
    return visible(request, OperatorAction.objects.all())


class NoteInline(OperatorScoped, ReadOnlyInline):
    operator_path = "dispute__player__operator"
    model = DisputeNote
    fields = ("created_at", "author", "text")
    show_change_link = False


class AssigneeFilter(admin.SimpleListFilter):
    """Mine / unassigned / anyone's."""

    title = "assignee"
    parameter_name = "assignee"

    def lookups(self, request, model_admin):
        return [("me", "Assigned to me"), ("none", "Unassigned")]

    def queryset(self, request, queryset):
        if self.value() == "me":
            return queryset.filter(assignee=request.user)
        if self.value() == "none":
            return queryset.filter(assignee__isnull=True)
        return queryset


@admin.register(Dispute)
class DisputeAdmin(OperatorScoped, ReadOnlyAdmin):
    """The dispute queue and a dispute's page (its bets' round replayed beside the dispute)."""

    operator_path = "player__operator"
    list_display = ("id", "created_at", "age", "player", "reason_short", "at_stake_shown", "status", "assignee",
                    "adjustment_shown", "resolved_at")
    list_filter = ("status", AssigneeFilter)
    list_select_related = ("player", "assignee", "currency")
    search_fields = ("=player__code",)
    ordering = ("created_at", "id")
    inlines = [NoteInline]
    change_form_template = "admin/settlement/dispute/change_form.html"
    fields = ("player", "status", "assignee", "currency", "reason", "resolution", "adjustment_shown", "created_at",
              "resolved_at", "resolved_by")
    readonly_fields = ("adjustment_shown",)

    def get_queryset(self, request):
        return with_amount_at_stake(super().get_queryset(request))

    @admin.display(description="adjustment", ordering="adjustment")
    def adjustment_shown(self, dispute):
        return format_money(dispute.adjustment, dispute.currency, code=True)

    @admin.display(description="at stake", ordering="at_stake")
    def at_stake_shown(self, dispute):
        """What the disputed bets staked, extra stakes included."""
        return format_money(dispute.at_stake, dispute.currency, code=True)

    @admin.display(description="age", ordering="created_at")
    def age(self, dispute):
        """How long the dispute has waited (until its decision, once decided)."""
        return timesince(dispute.created_at, dispute.resolved_at or timezone.now())

    @admin.display(description="reason")
    def reason_short(self, dispute):
        return Truncator(dispute.reason).chars(80)

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("<int:dispute_id>/assign/", view(actions.dispute_assign), name="settlement_dispute_assign"),
            path("<int:dispute_id>/note/", view(actions.dispute_note), name="settlement_dispute_note"),
            path("<int:dispute_id>/resolve/", view(actions.dispute_resolve), name="settlement_dispute_resolve"),
        ] + super().get_urls()

    def change_view(self, request, object_id, form_url="", extra_context=None):
        dispute = self.get_object(request, object_id)
        if dispute is not None:
            bets = list(with_money(dispute.bets.select_related("round", "table", "currency"))
                        .defer("round__record").order_by("id"))
            replays = [build_replay(round_id, bet_id=next(b.pk for b in bets if b.round_id == round_id),
                                    bets=replay_bets(request))
                       for round_id in dict.fromkeys(b.round_id for b in bets)]
            extra_context = {**(extra_context or {}), "bets": bets, "replays": replays,
                             "disputed_ids": [b.pk for b in bets],
                             "audit": audit_trail(dispute, among=audit_rows(request)),
                             "can_resolve": request.user.has_perm("settlement.resolve_dispute"),
                             "resolve_form": actions.ResolveForm()}
        return super().change_view(request, object_id, form_url, extra_context)


class AcknowledgeForm(ActionForm):
    reason = forms.CharField(required=False, max_length=500, help_text="Why (required to acknowledge).")


class AlertStatusFilter(admin.SimpleListFilter):
    """Open (unacknowledged, the default), acknowledged, or all."""

    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return [("open", "Open (unacknowledged)"), ("acknowledged", "Acknowledged"), ("all", "All")]

    def value(self):
        return super().value() or "open"

    def choices(self, changelist):
        for lookup, title in self.lookup_choices:
            yield {"selected": self.value() == lookup, "display": title,
                   "query_string": changelist.get_query_string({self.parameter_name: lookup})}

    def queryset(self, request, queryset):
        if self.value() == "acknowledged":
            return queryset.filter(acknowledged_at__isnull=False)
        if self.value() == "all":
            return queryset
        return queryset.filter(acknowledged_at__isnull=True)


@admin.register(Alert)
class AlertAdmin(OperatorScoped, RoundColumnMixin, ReadOnlyAdmin):
    """Open alerts by default (the status filter shows acknowledged or all); operators with
    ``settlement.acknowledge_alert`` acknowledge them with a reason
    (``settlement.alerts.acknowledge_alerts``, audited). Operator staff see the alerts about
    their players; the others (tables, rounds, the ledger) are the provider's."""

    operator_path = "player__operator"
    list_display = ("created_at", "kind", "severity", "table", "round_name", "message_short", "acknowledged",
                    "acknowledged_by")
    list_filter = (AlertStatusFilter, "kind", "severity")
    list_select_related = ("table", "round__table", "acknowledged_by")
    action_form = AcknowledgeForm
    actions = ["acknowledge"]

    @admin.display(description="message")
    def message_short(self, alert):
        text = alert.message or ""
        return format_html('<span title="{}">{}</span>', text, text if len(text) <= 90 else text[:88] + "…")

    @admin.display(description="acknowledged", ordering="acknowledged_at")
    def acknowledged(self, alert):
        if alert.acknowledged_at is None:
            return "—"
        return format_html('<span style="white-space:nowrap">{}</span>',
                           timezone.localtime(alert.acknowledged_at).strftime("%Y-%m-%d %H:%M:%S"))

    def has_acknowledge_permission(self, request):
        return request.user.has_perm("settlement.acknowledge_alert")

    @admin.action(description="Acknowledge the selected alerts", permissions=["acknowledge"])
    def acknowledge(self, request, queryset):
        try:
            done = acknowledge_alerts(alert_ids=list(queryset.values_list("pk", flat=True)),
                                      reason=request.POST.get("reason", ""), actor=request.user)
        except ReasonRequired as exc:
            self.message_user(request, f"Nothing acknowledged: {exc}.", messages.ERROR)
            return
        self.message_user(request, f"{len(done)} alert(s) acknowledged.", messages.SUCCESS)


class ApproveForm(ActionForm):
    reason = forms.CharField(required=False, max_length=500, help_text="Why (required to approve).")


@admin.register(Adjustment)
class AdjustmentAdmin(OperatorScoped, ReadOnlyAdmin):
    """Every manual adjustment, the ones awaiting a second supervisor first; a supervisor other than
    the one who asked approves them with a reason (``settlement.adjustments.approve_adjustment``)."""

    operator_path = "wallet__operator"
    list_display = ("id", "created_at", "wallet", "amount_shown", "status", "dispute", "requested_by", "approved_by",
                    "memo")
    list_filter = ("status",)
    list_select_related = ("wallet__player", "currency", "requested_by", "approved_by")
    ordering = ("-status", "-created_at")
    action_form = ApproveForm
    actions = ["approve"]

    @admin.display(description="amount", ordering="amount")
    def amount_shown(self, adjustment):
        return format_money(adjustment.amount, adjustment.currency, code=True)

    def has_approve_permission(self, request):
        return request.user.has_perm("accounts.adjust_any")

    @admin.action(description="Approve the selected adjustments (as the second supervisor)", permissions=["approve"])
    def approve(self, request, queryset):
        """Approve each selected adjustment; each says what happened to it, from what the service
        reports under the adjustment's lock (one already posted, also by a parallel click: nothing changed)."""
        for adjustment in queryset.order_by("pk"):
            try:
                _, posted = approve_adjustment(adjustment=adjustment, actor=request.user,
                                               reason=request.POST.get("reason", ""))
            except PlatformError as exc:
                self.message_user(request, f"Adjustment {adjustment.pk} not approved: {exc}.", messages.ERROR)
            else:
                if posted:
                    self.message_user(request, f"Adjustment {adjustment.pk} approved and posted.", messages.SUCCESS)
                else:
                    self.message_user(request, f"Adjustment {adjustment.pk} was already approved and posted: "
                                               "nothing changed.", messages.INFO)


@admin.register(OperatorAction)
class OperatorActionAdmin(OperatorScoped, ReadOnlyAdmin):
    """The audit trail: who did what, when, why. Operator staff see the rows on their operator's
    objects."""

    operator_path = "operator"
    list_display = ("created_at", "actor_label", "action", "target_model", "target_pk", "reason")
    list_filter = ("action", "target_model")
    search_fields = ("=actor_label", "=target_pk")


class ExceptionDateFilter(DateRangeFilter):
    title = "date (operator time zone)"
    field = "created_at"
    inputs = [("at_from", "From", "date"), ("at_to", "To", "date")]


@admin.register(ExceptionEntry)
class ExceptionEntryAdmin(OperatorScoped, CsvExportMixin, ReadOnlyAdmin):
    """The exception report (``settlement.exception_report``): voids, reversals, resettles,
    adjustments, dispute decisions and pay-table changes, newest first, each with its values
    before and after, user, reason and ledger transactions; filtered by kind, date, operator (the
    provider's) and exported as CSV. Operator staff see their operator's lines only."""

    operator_path = "operator"
    export_filename, export_header = "exception-report.csv", exception_report.CSV_HEADER
    list_display = ("created_at", "kind", "operator", "round", "player", "dispute", "amount_shown", "before_shown",
                    "after_shown", "user", "reason", "transactions_shown")
    list_filter = ("kind", ExceptionDateFilter, ("operator", admin.RelatedOnlyFieldListFilter))
    list_select_related = ("action", "operator", "round__table", "player", "currency")
    search_fields = ("=round__external_id", "=player__code", "=action__actor_label")
    ordering = ("-created_at", "-id")
    change_list_template = "admin/settlement/exceptionentry/change_list.html"

    def get_list_filter(self, request):
        return self.list_filter if is_provider(request) else self.list_filter[:2]

    def export_rows(self, queryset):
        return exception_report.rows_for_csv(queryset)

    @admin.display(description="amount", ordering="amount")
    def amount_shown(self, line):
        return format_money(line.amount, line.currency, code=True) if line.currency else ""

    @admin.display(description="before")
    def before_shown(self, line):
        return exception_report.values_text(line.before)

    @admin.display(description="after")
    def after_shown(self, line):
        return exception_report.values_text(line.after)

    @admin.display(description="user", ordering="action__actor_label")
    def user(self, line):
        return line.action.actor_label

    @admin.display(description="reason")
    def reason(self, line):
        return line.action.reason

    @admin.display(description="transactions")
    def transactions_shown(self, line):
        return " ".join(str(t) for t in line.transactions)


@admin.register(RoundCorrection)
class RoundCorrectionAdmin(OperatorScoped, RoundColumnMixin, ReadOnlyAdmin):
    """Corrected round records: the provider's (a record holds every operator's bets)."""

    operator_path = PROVIDER
    list_display = ("round_name", "sequence", "actor_label", "created_at", "reason")
    list_select_related = ("round__table",)


@admin.register(SettlementDetail)
class SettlementDetailAdmin(OperatorScoped, RoundColumnMixin, ReadOnlyAdmin):
    """The distinct bet details of each settlement (bets settled alike share one), newest first.
    The provider's: a bet's own detail is on its page."""

    operator_path = PROVIDER

    list_display = ("pk", "round_name", "correction", "settled_at", "detail_short")
    ordering = ("-id",)
    list_select_related = ("round__table",)
    show_full_result_count = False

    @admin.display(description="detail")
    def detail_short(self, settlement):
        return (settlement.detail or {}).get("explanation", "")[:120]


# --- the pages of the floors below, completed ------------------------------------------------------

@replace_page(Player)
class PlayerPage(PlayerBalancesPage):
    """A player's page with their latest bets and their disputes."""

    def change_view(self, request, object_id, form_url="", extra_context=None):
        player = self.get_object(request, object_id)
        if player is not None:
            extra_context = {**(extra_context or {}), "bets": list(bets_for_player(player)[:PAGE_ROWS]),
                             "disputes": list(player.disputes.select_related("assignee").order_by("-created_at"))}
        return super().change_view(request, object_id, form_url, extra_context)


@replace_page(Account)
class AccountPage(AccountBalancePage):
    """An account's page with its audit trail and, for a wallet, the manual adjustment."""

    def get_urls(self):
        return [path("<int:account_id>/adjust/", self.admin_site.admin_view(actions.account_adjust),
                     name="accounts_account_adjust")] + super().get_urls()

    def change_view(self, request, object_id, form_url="", extra_context=None):
        account = self.get_object(request, object_id)
        if account is not None:
            extra_context = {**(extra_context or {}), "audit": audit_trail(account, among=audit_rows(request)),
                             "can_adjust": account.is_wallet and (request.user.has_perm("accounts.adjust_small")
                                                                  or request.user.has_perm("accounts.adjust_any"))}
        return super().change_view(request, object_id, form_url, extra_context)


class TableForm(forms.ModelForm):
    """The table's form with the reason a pay-table change needs (the audit trail and the
    exception report keep it)."""

    pay_tables_reason = forms.CharField(required=False, label="reason for a pay-table change",
                                        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
                                        help_text="Required when the odds change: kept in the exception report.")

    class Meta:
        model = Table
        fields = ("pay_tables",)  # the page's fields are its fieldsets' (``ModelAdmin.get_form``)

    def clean(self):
        cleaned = super().clean()
        if self.instance.pk is not None and "pay_tables" in self.changed_data:
            try:
                cleaned["pay_tables_reason"] = require_reason(cleaned.get("pay_tables_reason"))
            except ReasonRequired as exc:
                self.add_error("pay_tables_reason", f"The odds changed: {exc}.")
        return cleaned


@replace_page(Table)
class TablePage(TableAdmin):
    """A table's page with its open RTP-watch alerts (the provider's: operator staff see none); a
    change of its pay tables asks why and is audited with its line in the exception report
    (``settlement.exception_report.record_pay_tables``)."""

    form = TableForm
    readonly_fields = (*TableAdmin.readonly_fields, "rtp_alerts")
    fieldsets = [(name, {**options, "fields": (*options["fields"], "rtp_alerts")} if name == "Return to player"
                  else {**options, "fields": (*options["fields"], "pay_tables_reason")} if name == "Pay tables"
                  else options) for name, options in TableAdmin.fieldsets]

    def get_fieldsets(self, request, obj=None):
        if is_provider(request):
            return self.fieldsets
        return TableAdmin.fieldsets

    def save_model(self, request, obj, form, change):
        before = Table.objects.get(pk=obj.pk).rules() if change else None
        super().save_model(request, obj, form, change)
        if change and "pay_tables" in form.changed_data:
            exception_report.record_pay_tables(table=obj, before=before, actor=request.user,
                                               reason=form.cleaned_data["pay_tables_reason"])

    @admin.display(description="open RTP-watch alerts")
    def rtp_alerts(self, table):
        alerts = Alert.objects.filter(kind=Alert.Kind.RTP_DEVIATION, table=table, acknowledged_at__isnull=True)
        return format_html_join("", "<p>{}: {}</p>", ((a.created_at, a.message) for a in alerts)) or "none"


@replace_page(Round)
class RoundPage(RoundAdmin):
    """A round's page: its replay, its audit trail, and the void and resettle actions."""

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("<int:round_id>/void/", view(actions.void_round), name="tables_round_void"),
            path("<int:round_id>/resettle/", view(actions.resettle_round), name="tables_round_resettle"),
        ] + super().get_urls()

    def change_view(self, request, object_id, form_url="", extra_context=None):
        round_ = self.get_object(request, object_id)
        if round_ is not None:
            extra_context = {**(extra_context or {}),
                             "replay": build_replay(round_.pk, round_=round_, bets=replay_bets(request)),
                             "audit": audit_trail(round_, among=audit_rows(request)),
                             "can_void": actions.may_move_round(request, "tables.void_round"),
                             "can_resettle": actions.may_move_round(request, "tables.resettle_round")}
        return super().change_view(request, object_id, form_url, extra_context)


@replace_page(Bet)
class BetPage(BetAdmin):
    """A bet's page with what a dispute needs: the bet's play and how its return was computed, its
    round's replay, its ledger entries, its disputes and the audit trail. The Bet Record's CSV
    export is audited (who, which search)."""

    def export_csv(self, request):
        response = super().export_csv(request)
        if isinstance(response, StreamingHttpResponse):
            audit.record(actor=request.user, action=OperatorAction.Action.EXPORT_CSV, target=("wagering.bet", "*"),
                         operator_id=operator_id_of(request), reason="Bet Record exported as CSV",
                         query=request.GET.urlencode()[:2000])
        return response

    def change_view(self, request, object_id, form_url="", extra_context=None):
        bet = self.get_object(request, object_id)
        if bet is not None:
            replay = build_replay(bet.round_id, bet_id=bet.pk, round_=bet.round, bets=replay_bets(request))
            line = next(b for b in replay.bets if b.bet.pk == bet.pk)
            settlement = getattr(bet, "settlement", None) if bet.state == Bet.State.SETTLED else None
            extra_context = {**(extra_context or {}), "replay": replay, "line": line, "settlement": settlement,
                             "ledger_entries": list(bet_ledger_entries(line.bet)),
                             "audit": audit_trail(bet, replay.round, among=audit_rows(request)),
                             "disputes": list(bet.disputes.select_related("assignee"))}
        return super().change_view(request, object_id, form_url, extra_context)


#: The open wallet alerts the console lists, newest first.
CONSOLE_ALERTS = 50


@replace_page(WalletMovement)
class WalletMovementPage(WalletMovementAdmin):
    """A wallet movement's page with its audit trail and, for a Supervisor
    (``wallets.retry_movement``) while it can be sent again, "Retry now"; the console with the
    open ``wallet_failing`` alerts about the players of the operators it shows."""

    def get_urls(self):
        return [path("<int:movement_id>/retry/", self.admin_site.admin_view(actions.retry_movement),
                     name="wallets_walletmovement_retry")] + super().get_urls()

    def change_view(self, request, object_id, form_url="", extra_context=None):
        movement = self.get_object(request, object_id)
        if movement is not None:
            extra_context = {**(extra_context or {}), "audit": audit_trail(movement, among=audit_rows(request)),
                             "can_retry": request.user.has_perm("wallets.retry_movement")
                             and retry_refusal(movement) is None,
                             "retry_form": actions.ReasonForm()}
        return super().change_view(request, object_id, form_url, extra_context)

    def console_context(self, request, operators):
        alerts = visible(request, Alert.objects.filter(kind=Alert.Kind.WALLET_FAILING, acknowledged_at__isnull=True,
                                                       player__operator__in=operators))
        return {**super().console_context(request, operators), "alerts_open": alerts.count(),
                "alerts": list(alerts.select_related("player").order_by("-created_at", "-id")[:CONSOLE_ALERTS])}
