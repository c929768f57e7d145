"""Operator pages of players, wallets and the ledger: balances per currency, account kind, ledger
entries with balance after. All read-only; money moves only through the ledger services.
``settlement.admin`` completes the player's page (bets, disputes) and the wallet's (the manual
adjustment, the audit trail).

Every page declares its ``operator_path`` (``accounts.scoping``); the pages other apps
registered before this module (users, groups, tokens, beat schedules) are made the provider's."""

from django.contrib import admin
from django.db.models import Case, DecimalField, F, OuterRef, Subquery, Sum, Value, When
from django.db.models.functions import Coalesce

from adminkit.base import ReadOnlyAdmin, ReadOnlyInline, RequestCachedObjectMixin
from adminkit.money import format_money

from .models import Account, Currency, LedgerEntry, LedgerTransaction, Player
from .scoping import SHARED, OperatorScoped, close_unscoped_pages
from .selectors import ledger_entries_for_player, wallets_of

close_unscoped_pages()  # the apps before this one in INSTALLED_APPS; later ones declare their scope

#: Rows of each list shown on a player's or an account's page.
PAGE_ROWS = 50


@admin.register(Currency)
class CurrencyAdmin(OperatorScoped, admin.ModelAdmin):
    operator_path = SHARED
    list_display = ("code", "name", "minor_units", "play_for_fun")

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Player)
class PlayerAdmin(OperatorScoped, ReadOnlyAdmin):
    """A player's page: wallets (balance per currency) and latest ledger entries."""

    operator_path = "operator"
    list_display = ("code", "operator", "user", "account_kind", "created_at")
    list_filter = ("account_kind", ("operator", admin.RelatedOnlyFieldListFilter))
    search_fields = ("=code", "=game_code", "user__username")
    list_select_related = ("user", "operator")
    change_form_template = "admin/accounts/player/change_form.html"

    def change_view(self, request, object_id, form_url="", extra_context=None):
        player = self.get_object(request, object_id)
        if player is not None:
            extra_context = {**(extra_context or {}), "wallets": list(wallets_of(player)),
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
        return format_money(account.current_balance, account.currency, code=True)

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

