"""Operator pages of players, wallets and the ledger: balances per currency, account kind, ledger
entries with balance after. All read-only; money moves only through the ledger services. A
seamless player's wallet here is the platform's journal, labelled so; ``wallets.admin`` adds the
balance the operator's wallet answers. ``settlement.admin`` completes the player's page (bets,
disputes) and the wallet's (the manual adjustment, the audit trail).

And the operators' pages: operators (the wallet secret is write-only), their API keys (the raw
key shown once, at creation; never the hash), the operator API's calls, and the operator staff
(provider superusers only). Every page declares its ``operator_path`` (``accounts.scoping``);
the pages other apps registered before this module (users, groups, tokens, beat schedules) are
made the provider's, the library's own ``APIKey`` page is removed (the platform's keys are
``OperatorAPIKey``), and the TOTP devices' page is the provider's with deletions as resets."""

from django import forms
from django.contrib import admin
from django.db.models import Case, DecimalField, F, OuterRef, Subquery, Sum, Value, When
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils.html import format_html
from django_otp.plugins.otp_totp.admin import TOTPDeviceAdmin
from django_otp.plugins.otp_totp.models import TOTPDevice
from rest_framework_api_key.admin import APIKeyModelAdmin
from rest_framework_api_key.models import APIKey

from adminkit.base import AddressedBy, ReadOnlyAdmin, ReadOnlyInline, RequestCachedObjectMixin
from adminkit.money import format_money
from adminkit.paginator import LookaheadPaginatorMixin
from adminkit.site import reset_second_factor

from .models import (
    Account,
    Currency,
    LedgerEntry,
    LedgerTransaction,
    Operator,
    OperatorAPICall,
    OperatorAPIKey,
    OperatorStaff,
    Player,
)
from .scoping import PROVIDER, SHARED, OperatorScoped, close_unscoped_pages, is_provider, operator_id_of
from .selectors import ledger_entries_for_player, wallets_of

admin.site.unregister(APIKey)
admin.site.unregister(TOTPDevice)
close_unscoped_pages()  # the apps before this one in INSTALLED_APPS; later ones declare their scope


@admin.register(TOTPDevice)
class SecondFactorAdmin(OperatorScoped, TOTPDeviceAdmin):
    """The staff's TOTP devices, the provider's page. Only a superuser deletes one, and a deletion
    is a reset of the user's second factor (``adminkit.site.reset_second_factor``): their enrolment
    window opens again."""

    operator_path = PROVIDER

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_delete_permission(request, obj)

    def delete_model(self, request, obj):
        reset_second_factor(obj.user)

    def delete_queryset(self, request, queryset):
        for user in {device.user for device in queryset.select_related("user")}:
            reset_second_factor(user)

#: Rows of each list shown on a player's or an account's page.
PAGE_ROWS = 50


@admin.register(Currency)
class CurrencyAdmin(OperatorScoped, admin.ModelAdmin):
    operator_path = SHARED
    list_display = ("code", "name", "minor_units", "play_for_fun")

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Player)
class PlayerAdmin(OperatorScoped, LookaheadPaginatorMixin, ReadOnlyAdmin):
    """Players, searched by the start of their code or game code in any case (``demo-real-000``
    finds ``DEMO-REAL-0001``; prefix indexes: migration 0009), counted up to
    ``adminkit.paginator.COUNT_UP_TO``; a player's page: wallets (balance per currency) and
    latest ledger entries."""

    operator_path = "operator"
    list_display = ("code", "operator", "user", "account_kind", "created_at")
    list_filter = ("account_kind", ("operator", admin.RelatedOnlyFieldListFilter))
    search_fields = ("^code", "^game_code")
    search_help_text = "The start of a player code or game code (brand:code), in any case."
    list_select_related = ("user", "operator")
    ordering = ("-created_at", "-id")
    change_list_template = "admin/accounts/player/change_list.html"
    change_form_template = "admin/accounts/player/change_form.html"

    def changelist_view(self, request, extra_context=None):
        query = request.GET.copy()
        query.pop("p", None)
        return super().changelist_view(request, {**(extra_context or {}), "list_query": query.urlencode()})

    def wallets_shown(self, request, player):
        """The wallets the page lists (``wallets.admin`` adds a seamless player's balances)."""
        return list(wallets_of(player))

    def change_view(self, request, object_id, form_url="", extra_context=None):
        player = self.get_object(request, object_id)
        if player is not None:
            extra_context = {**(extra_context or {}), "wallets": self.wallets_shown(request, player),
                             "entries": list(ledger_entries_for_player(player)[:PAGE_ROWS])}
        return super().change_view(request, object_id, form_url, extra_context)


class EntryInline(OperatorScoped, ReadOnlyInline):
    operator_path = "account__operator"
    model = LedgerEntry
    fields = ("account", "amount_shown", "balance_after_shown")
    readonly_fields = ("amount_shown", "balance_after_shown")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("account__currency", "account__player")

    @admin.display(description="amount")
    def amount_shown(self, entry):
        return format_money(entry.amount, entry.account.currency)

    @admin.display(description="balance after")
    def balance_after_shown(self, entry):
        return format_money(entry.balance_after, entry.account.currency)


def with_balance(accounts):
    """``accounts`` annotated with ``current_balance``: the balance column for wallets, the sum of
    the entries for house and cashier accounts (no balance column: ``account_balance``); one
    query for a page of accounts."""
    money = DecimalField(max_digits=20, decimal_places=4)
    entries = (LedgerEntry.objects.filter(account=OuterRef("pk")).order_by().values("account")
               .annotate(total=Sum("amount")).values("total"))
    return accounts.annotate(current_balance=Case(
        When(kind=Account.Kind.WALLET, then=F("balance")),
        default=Coalesce(Subquery(entries, output_field=money), Value(0, output_field=money)), output_field=money))


@admin.register(Account)
class AccountAdmin(OperatorScoped, RequestCachedObjectMixin, ReadOnlyAdmin):
    """Wallets, house and cashier accounts; an account's page lists its latest entries. Balances are
    the real ones for every kind (house and cashier: the sum of their entries, annotated in the
    list's one query)."""

    operator_path = "operator"
    list_display = ("id", "kind", "operator", "player", "name", "currency", "balance_shown", "negative_flagged")
    list_filter = ("kind", "currency", "negative_flagged", ("operator", admin.RelatedOnlyFieldListFilter))
    search_fields = ("=player__code", "=player__game_code", "name")
    show_full_result_count = False
    change_form_template = "admin/accounts/account/change_form.html"
    readonly_fields = ("balance_shown",)
    fields = ("kind", "operator", "player", "name", "currency", "balance_shown", "negative_flagged")

    def get_queryset(self, request):
        return with_balance(super().get_queryset(request).select_related("operator", "player", "currency"))

    @admin.display(description="balance", ordering="current_balance")
    def balance_shown(self, account):
        """The balance; a seamless player's journal wallet says so (the money is at the operator's)."""
        shown = format_money(account.current_balance, account.currency, code=True)
        return f"{shown} (the platform's journal)" if account.journal else shown

    def change_view(self, request, object_id, form_url="", extra_context=None):
        account = self.get_object(request, object_id)
        if account is not None:
            extra_context = {**(extra_context or {}), "balance": account.current_balance,
                             "entries": list(account.entries.select_related("transaction").order_by("-id")[:PAGE_ROWS])}
        return super().change_view(request, object_id, form_url, extra_context)


@admin.register(LedgerTransaction)
class LedgerTransactionAdmin(OperatorScoped, ReadOnlyAdmin):
    """Ledger transactions with their entries; an operator's are those on its accounts (a posting
    never crosses operators)."""

    operator_path = "entries__account__operator"
    list_display = ("key", "kind", "currency", "memo", "created_at")
    list_select_related = ("currency",)
    list_filter = ("kind", "currency")
    search_fields = ("=key",)
    show_full_result_count = False
    inlines = [EntryInline]


# --- operators, their keys, calls and staff --------------------------------------------------------

class OperatorForm(forms.ModelForm):
    """An operator's settings; the wallet secret is write-only: never rendered back, and left
    blank it keeps the one stored."""

    wallet_url = forms.URLField(required=False, max_length=200, assume_scheme="https")
    wallet_secret = forms.CharField(
        required=False, max_length=128, widget=forms.PasswordInput(render_value=False),
        help_text="Write-only: never shown. Leave blank to keep the stored secret.")

    class Meta:
        model = Operator
        fields = ("code", "name", "wallet_mode", "time_zone", "currencies", "wallet_url", "wallet_secret",
                  "wallet_timeout_ms", "wallet_concurrency")

    def clean_wallet_secret(self):
        return self.cleaned_data["wallet_secret"] or self.instance.wallet_secret


@admin.register(Operator)
class OperatorAdmin(OperatorScoped, admin.ModelAdmin):
    """Operators (casino brands): code, name, wallet mode, zone of its days and currencies, the
    seamless wallet's URL, secret (write-only), timeout and concurrency. The code never changes
    once saved (the game server names the operator's players by it), nor do the wallet mode and
    zone once it has players (``Operator.FIXED_ONCE_PLAYED``: shown read-only); keys are created
    on the API keys page. Operators are added by the provider's staff only, and never deleted
    here."""

    operator_path = "id"
    form = OperatorForm
    list_display = ("code", "name", "wallet_mode", "currencies_shown", "wallet_url", "wallet_timeout_ms")
    list_filter = ("wallet_mode",)
    search_fields = ("code", "name")
    ordering = ("code",)
    readonly_fields = ("api_keys",)
    filter_horizontal = ("currencies",)

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("currencies")

    def has_add_permission(self, request):
        return is_provider(request) and super().has_add_permission(request)

    def has_delete_permission(self, request, obj=None):
        return False

    def get_fields(self, request, obj=None):
        fields = [*OperatorForm.Meta.fields, *(("api_keys",) if obj is not None else ())]
        if not self.has_change_permission(request, obj) and obj is not None:
            fields.remove("wallet_secret")  # a view-only page would show its value
        return fields

    def get_readonly_fields(self, request, obj=None):
        """The code once saved; every field of ``Operator.FIXED_ONCE_PLAYED`` once it has players."""
        fixed = () if obj is None else Operator.FIXED_ONCE_PLAYED if obj.players.exists() else ("code",)
        return (*self.readonly_fields, *fixed)

    @admin.display(description="currencies")
    def currencies_shown(self, operator):
        return ", ".join(sorted(c.code for c in operator.currencies.all()))

    @admin.display(description="API keys")
    def api_keys(self, operator):
        keys = operator.api_keys.all()
        url = reverse("admin:accounts_operatorapikey_changelist")
        return format_html('<a href="{}?operator__id__exact={}">{} key(s), {} revoked</a>', url, operator.pk,
                           len(keys), sum(k.revoked for k in keys))


@admin.register(OperatorAPIKey)
class OperatorAPIKeyAdmin(OperatorScoped, AddressedBy, APIKeyModelAdmin):
    """An operator's keys of the operator API, named by their prefix (the primary key holds the
    hash, never shown). Created here, the raw key is shown once (``APIKeyModelAdmin``); revoked
    with the revoked checkbox, for good. Operator staff see and create only their own
    operator's."""

    operator_path = "operator"
    url_field = "prefix"
    list_display = ("prefix", "name", "operator", "created", "expiry_date", "_has_expired", "revoked")
    list_filter = (("operator", admin.RelatedOnlyFieldListFilter), "revoked", "created")
    list_select_related = ("operator",)
    autocomplete_fields = ("operator",)
    fields = ("operator", "name", "prefix", "expiry_date", "revoked")

    def get_readonly_fields(self, request, obj=None):
        return (*super().get_readonly_fields(request, obj), *(("operator",) if obj is not None else ()))

    def get_changeform_initial_data(self, request):
        return {**super().get_changeform_initial_data(request), "operator": operator_id_of(request)}


@admin.register(OperatorAPICall)
class OperatorAPICallAdmin(OperatorScoped, LookaheadPaginatorMixin, ReadOnlyAdmin):
    """The operator API's audit: every call with its key (by prefix and name), method, path and
    status, newest first."""

    operator_path = "operator"
    list_display = ("at", "operator", "key_shown", "method", "path", "status")
    list_filter = (("operator", admin.RelatedOnlyFieldListFilter), "method", "status")
    list_select_related = ("operator", "key")
    search_fields = ("=key__prefix", "path")
    ordering = ("-at", "-id")
    fields = ("at", "operator", "key_shown", "method", "path", "status")
    readonly_fields = ("at", "key_shown")

    @admin.display(description="key")
    def key_shown(self, call):
        return f"{call.key.prefix} ({call.key.name})"


@admin.register(OperatorStaff)
class OperatorStaffAdmin(OperatorScoped, admin.ModelAdmin):
    """Which staff users are an operator's (they then see only its rows): provider superusers only."""

    operator_path = PROVIDER
    list_display = ("user", "operator")
    list_filter = ("operator",)
    list_select_related = ("user", "operator")
    search_fields = ("user__username",)
    autocomplete_fields = ("user",)

    def _superuser(self, request):
        return request.user.is_active and request.user.is_superuser and is_provider(request)

    def has_module_permission(self, request):
        return self._superuser(request)

    def has_view_permission(self, request, obj=None):
        return self._superuser(request)

    def has_add_permission(self, request):
        return self._superuser(request)

    def has_change_permission(self, request, obj=None):
        return self._superuser(request)

    def has_delete_permission(self, request, obj=None):
        return self._superuser(request)
