"""Operator pages of the seamless wallets: the wallet journal (every movement with each attempt of
its call: what was sent, what came back, how long it took), the console of what waits at each
operator's wallet, and a seamless player's balance as the operator's wallet answers it on the
player's and the wallet's pages. All read-only.

``settlement.admin`` completes the movement's page (the audit trail, a Supervisor's "Retry now")
and the console (the open ``wallet_failing`` alerts). Every page declares its ``operator_path``
(``accounts.scoping``): operator staff see their operator's movements and console only."""

import json

from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from accounts.admin import AccountAdmin, PlayerAdmin
from accounts.models import Account, Operator, Player
from accounts.scoping import OperatorScoped, visible
from adminkit.base import ReadOnlyAdmin, RequestCachedObjectMixin, replace_page
from adminkit.money import format_money
from adminkit.paginator import LookaheadPaginatorMixin

from . import client
from .balances import with_operator_balances
from .models import WalletMovement
from .selectors import console, latest_failures

#: The attempts a movement's page shows, newest first.
ATTEMPTS_SHOWN = 100
#: The failed attempts the console shows.
CONSOLE_FAILURES = 20


def readable_json(value):
    """``value`` (a request or an answer as stored) as indented JSON; text as it came; "" for None."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


class OperatorFilter(admin.RelatedFieldListFilter):
    """By operator, offering the seamless operators the user sees (operator staff: their own)."""

    def field_choices(self, field, request, model_admin):
        operators = Operator.objects.filter(wallet_mode=Operator.WalletMode.SEAMLESS).order_by("code")
        return [(o.pk, str(o)) for o in visible(request, operators, model_admin.admin_site)]


class FailingFilter(admin.SimpleListFilter):
    """Failing now: pending, an attempt has failed, still retried."""

    title = "failing"
    parameter_name = "failing"

    def lookups(self, request, model_admin):
        return [("yes", "Failing now (still retried)")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(state=WalletMovement.State.PENDING, failing_since__isnull=False)
        return queryset


class KindFilter(admin.SimpleListFilter):
    """The protocol's kinds (``WalletMovement.KINDS``), without reading the table for them."""

    title = "kind"
    parameter_name = "kind"

    def lookups(self, request, model_admin):
        return [(kind, kind) for kind in WalletMovement.KINDS]

    def queryset(self, request, queryset):
        return queryset.filter(kind=self.value()) if self.value() else queryset


@admin.register(WalletMovement)
class WalletMovementAdmin(OperatorScoped, LookaheadPaginatorMixin, RequestCachedObjectMixin, ReadOnlyAdmin):
    """The wallet journal: every movement of a seamless player's money at its operator's wallet,
    newest first, and a movement's page with its attempts (``ATTEMPTS_SHOWN`` newest); the console
    (``console_view``). Lists never count (``LookaheadPaginator``) and search through indexes."""

    operator_path = "operator"
    list_display = ("key", "operator", "player", "call", "kind", "amount_shown", "state", "status", "attempts",
                    "last_error_short", "created_at", "acknowledged_at")
    list_filter = (("operator", OperatorFilter), "state", FailingFilter, "call", KindFilter)
    list_select_related = ("operator", "player", "currency")
    search_fields = ("=key", "=round_ref", "=player__code", "=player__game_code")
    search_help_text = "A movement's key or transaction id, a round (its id), or a player's code."
    ordering = ("-id",)
    sortable_by = ()  # newest first only: any other order would sort the whole journal
    show_facets = admin.ShowFacets.NEVER
    change_list_template = "admin/wallets/walletmovement/change_list.html"
    change_form_template = "admin/wallets/walletmovement/change_form.html"
    console_template = "admin/wallets/walletmovement/console.html"
    fields = ("key", "transaction_id", "ledger_key", "operator", "player", "call", "kind", "amount_shown",
              "reference_shown", "round_ref", "table_ref", "bets", "state", "status", "attempts", "next_attempt_at",
              "leased_until", "failing_since", "last_error", "created_at", "acknowledged_at")
    readonly_fields = ("transaction_id", "amount_shown", "reference_shown")

    @admin.display(description="amount")
    def amount_shown(self, movement):
        return format_money(movement.amount, movement.currency, code=True)

    @admin.display(description="transaction id (the operator's)")
    def transaction_id(self, movement):
        return client.transaction_id(movement.key)

    @admin.display(description="rolls back")
    def reference_shown(self, movement):
        if movement.reference_id is None:
            return ""
        url = reverse("admin:wallets_walletmovement_change", args=[movement.reference_id])
        return format_html('<a href="{}">{}</a>', url, movement.reference.key)

    @admin.display(description="last error")
    def last_error_short(self, movement):
        text = movement.last_error
        return text if len(text) <= 60 else text[:58] + "…"

    def get_search_results(self, request, queryset, search_term):
        """Exact matches of ``search_term`` on the key (or the transaction id the operator sees),
        the round or the player's code or game code, each through its own index."""
        term = search_term.strip()
        if not term:
            return queryset, False
        keys = {term, term.removeprefix(f"{settings.WALLET_INSTALLATION_ID}:")}
        players = list(Player.objects.filter(Q(code=term) | Q(game_code=term)).values_list("pk", flat=True)[:100])
        return queryset.filter(Q(key__in=keys) | Q(round_ref=term) | Q(player__in=players)), False

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("console/", view(self.console_view), name="wallets_walletmovement_console"),
            path("console/<int:operator_id>/", view(self.console_view), name="wallets_walletmovement_console_of"),
        ] + super().get_urls()

    def change_view(self, request, object_id, form_url="", extra_context=None):
        movement = self.get_object(request, object_id)
        if movement is not None:
            calls = list(movement.calls.order_by("-id")[:ATTEMPTS_SHOWN])
            extra_context = {**(extra_context or {}),
                             "attempts": [(c, readable_json(c.request), readable_json(c.answer)) for c in calls],
                             "attempts_left_out": max(0, movement.attempts - len(calls)),
                             "rollbacks": list(movement.rollbacks.all())}
        return super().change_view(request, object_id, form_url, extra_context)

    def console_view(self, request, operator_id=None):
        """``/admin/wallets/walletmovement/console/[<operator id>/]``: per seamless operator the user
        sees (one, or all of them), its movements pending, failing and failed for good, its oldest
        pending movement, and the latest failed attempts (``console_context``)."""
        if not self.has_view_permission(request):
            raise PermissionDenied("needs wallets.view_walletmovement")
        operators = visible(request, Operator.objects.filter(wallet_mode=Operator.WalletMode.SEAMLESS)
                            .order_by("code"), self.admin_site)
        if operator_id is not None:
            operators = operators.filter(pk=operator_id)
        operators = list(operators)
        if operator_id is not None and not operators:
            raise Http404(f"no seamless operator {operator_id}")
        title = f"Wallet console: {operators[0]}" if operator_id is not None else "Wallet console"
        return TemplateResponse(request, self.console_template, {
            **self.admin_site.each_context(request), "opts": self.opts, "title": title,
            "one_operator": operator_id is not None, **self.console_context(request, operators)})

    def console_context(self, request, operators):
        """What the console shows of ``operators`` (the ones ``request.user`` sees)."""
        return {"consoles": console(operators), "failures": latest_failures(operators, CONSOLE_FAILURES),
                "now": timezone.now()}


@replace_page(Player)
class PlayerBalancesPage(PlayerAdmin):
    """A player's page; a seamless player's wallets show the balance their operator's wallet
    answers, beside the platform's journal."""

    def wallets_shown(self, request, player):
        return with_operator_balances(super().wallets_shown(request, player))


@replace_page(Account)
class AccountBalancePage(AccountAdmin):
    """An account's page; a seamless player's wallet shows the balance the operator's wallet
    answers, beside the platform's journal."""

    def change_view(self, request, object_id, form_url="", extra_context=None):
        account = self.get_object(request, object_id)
        if account is not None and account.journal:
            with_operator_balances([account])  # the one object the page shows (read once per request)
        return super().change_view(request, object_id, form_url, extra_context)
