"""Operator pages of settlement: the dispute queue (oldest first, by status and assignee) and a
dispute's page with the round replay beside it (assign, notes, resolve through
``settlement.disputes``); alerts, corrections, bet settlements and the audit trail, read-only."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.urls import path
from django.utils import timezone
from django.utils.html import format_html

from delivery.backoffice import views as actions
from delivery.backoffice.admin_base import ReadOnlyAdmin, ReadOnlyInline
from delivery.backoffice.money import format_money
from delivery.backoffice.selectors import audit_trail
from tables.admin import RoundColumnMixin
from delivery.backoffice.replay import build_replay

from .alerts import acknowledge_alerts
from .exceptions import ReasonRequired
from .models import Alert, Dispute, DisputeNote, OperatorAction, RoundCorrection, SettlementDetail


class NoteInline(ReadOnlyInline):
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
class DisputeAdmin(ReadOnlyAdmin):
    """The dispute queue and a dispute's page (its bets' round replayed beside the dispute)."""

    list_display = ("id", "created_at", "player", "status", "assignee", "currency", "adjustment", "resolved_at")
    list_filter = ("status", AssigneeFilter)
    list_select_related = ("player", "assignee")
    search_fields = ("=player__code",)
    ordering = ("created_at", "id")
    inlines = [NoteInline]
    change_form_template = "admin/settlement/dispute/change_form.html"
    fields = ("player", "status", "assignee", "currency", "reason", "resolution", "adjustment_shown", "created_at",
              "resolved_at", "resolved_by")
    readonly_fields = ("adjustment_shown",)

    @admin.display(description="adjustment", ordering="adjustment")
    def adjustment_shown(self, dispute):
        return format_money(dispute.adjustment, dispute.currency, code=True)

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
            bets = list(dispute.bets.select_related("round", "table", "currency").defer("round__record").order_by("id"))
            replays = [build_replay(round_id, bet_id=next(b.pk for b in bets if b.round_id == round_id))
                       for round_id in dict.fromkeys(b.round_id for b in bets)]
            extra_context = {**(extra_context or {}), "bets": bets, "replays": replays, "audit": audit_trail(dispute),
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
class AlertAdmin(RoundColumnMixin, ReadOnlyAdmin):
    """Open alerts by default (the status filter shows acknowledged or all); operators with
    ``settlement.acknowledge_alert`` acknowledge them with a reason
    (``settlement.alerts.acknowledge_alerts``, audited)."""

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


@admin.register(OperatorAction)
class OperatorActionAdmin(ReadOnlyAdmin):
    """The audit trail: who did what, when, why."""

    list_display = ("created_at", "actor_label", "action", "target_model", "target_pk", "reason")
    list_filter = ("action", "target_model")
    search_fields = ("=actor_label", "=target_pk")


@admin.register(RoundCorrection)
class RoundCorrectionAdmin(RoundColumnMixin, ReadOnlyAdmin):
    list_display = ("round_name", "sequence", "actor_label", "created_at", "reason")
    list_select_related = ("round__table",)


@admin.register(SettlementDetail)
class SettlementDetailAdmin(RoundColumnMixin, ReadOnlyAdmin):
    """The distinct bet details of each settlement (bets settled alike share one), newest first."""

    list_display = ("pk", "round_name", "correction", "settled_at", "detail_short")
    ordering = ("-id",)
    list_select_related = ("round__table",)
    show_full_result_count = False

    @admin.display(description="detail")
    def detail_short(self, settlement):
        return (settlement.detail or {}).get("explanation", "")[:120]
