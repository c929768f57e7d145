"""Players, currencies, ledger accounts (player wallets, house and cashier accounts) and the
double-entry ledger. Balances change only through ``accounts.services.post``; rows here are never
edited by hand (ledger rows are immutable, enforced in ``save``/``delete`` and by a database trigger
on PostgreSQL)."""

from django.conf import settings
from django.db import models
from django.db.models import Q

#: Money columns hold up to 4 minor-unit decimals; a currency's own ``minor_units`` is enforced
#: by ``accounts.money.parse_amount`` before anything is written.
MONEY = {"max_digits": 20, "decimal_places": 4}


class Currency(models.Model):
    """A currency: ISO-like ``code`` (``EUR``), ``minor_units`` (2 = cents) and whether it is a
    play-for-fun currency (RULES 9: such money never sits at a seat and never meets real money)."""

    code = models.CharField(max_length=8, primary_key=True)
    name = models.CharField(max_length=64, blank=True)
    minor_units = models.PositiveSmallIntegerField(default=2)
    play_for_fun = models.BooleanField(default=False)

    class Meta:
        verbose_name_plural = "currencies"
        constraints = [models.CheckConstraint(condition=Q(minor_units__lte=4), name="currency_minor_units_lte_4")]

    def __str__(self):
        return self.code


class Player(models.Model):
    """A player, linked to a Django user. ``code`` is the id the game server knows the player by
    (the ``player`` field of a round record). ``account_kind`` is ``real`` or ``trial``."""

    class Kind(models.TextChoices):
        REAL = "real", "Real"
        TRIAL = "trial", "Trial"

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="player")
    code = models.CharField(max_length=64, unique=True)
    account_kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.REAL)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.code


class Account(models.Model):
    """A ledger account in one currency.

    - ``wallet``: a player's money; one per player per currency; its ``balance`` is kept up to date
      under a row lock and may never go below zero, except through a reversal of a settled round,
      which sets ``negative_flagged`` for operators.
    - ``house``: the house side of one table (``name`` = ``table:<code>``) in one currency.
    - ``cashier``: where deposits come from and withdrawals go, one per currency.

    House and cashier balances are not kept in a column (they would be a hot row every bet
    contends for): they are the sum of their entries (``accounts.selectors.account_balance``).
    """

    class Kind(models.TextChoices):
        WALLET = "wallet", "Player wallet"
        HOUSE = "house", "House"
        CASHIER = "cashier", "Cashier"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT, related_name="accounts")
    player = models.ForeignKey(Player, null=True, blank=True, on_delete=models.PROTECT, related_name="wallets")
    name = models.CharField(max_length=64, blank=True)
    balance = models.DecimalField(default=0, **MONEY)
    negative_flagged = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["player", "currency"], condition=Q(kind="wallet"),
                                    name="one_wallet_per_player_currency"),
            models.UniqueConstraint(fields=["kind", "name", "currency"], condition=~Q(kind="wallet"),
                                    name="one_named_account_per_currency"),
            models.CheckConstraint(condition=Q(kind="wallet", player__isnull=False)
                                   | (~Q(kind="wallet") & Q(player__isnull=True)),
                                   name="wallet_has_player"),
            models.CheckConstraint(condition=~Q(kind="wallet") | Q(balance__gte=0) | Q(negative_flagged=True),
                                   name="wallet_not_negative"),
        ]

    def __str__(self):
        if self.is_wallet:
            return f"{self.player_id and self.player.code} {self.currency_id}"
        return f"{self.name} {self.currency_id}"

    @property
    def is_wallet(self):
        return self.kind == self.Kind.WALLET


class ImmutableModel(models.Model):
    """A row that is written once and never changed or deleted (ledger rows)."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if self.pk is not None and not self._state.adding:
            raise TypeError(f"{type(self).__name__} rows are immutable")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} rows are immutable")


class LedgerTransaction(ImmutableModel):
    """One movement of money: balanced entries (summing to zero) in ONE currency, under a unique
    idempotency ``key`` such as ``stake:<bet>``, ``payout:<bet>``, ``refund:<bet>``, ``adjust:<dispute>``."""

    class Kind(models.TextChoices):
        DEPOSIT = "deposit"
        WITHDRAWAL = "withdrawal"
        STAKE = "stake"
        PAYOUT = "payout"
        REFUND = "refund"
        REVERSAL = "reversal"
        ADJUSTMENT = "adjustment"

    key = models.CharField(max_length=128, unique=True)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT)
    memo = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self):
        return self.key


class LedgerEntry(ImmutableModel):
    """One leg of a transaction: ``amount`` is signed (credit to the account > 0, debit < 0), in the
    currency's major units. ``balance_after`` is the wallet's balance after this entry (wallets only)."""

    transaction = models.ForeignKey(LedgerTransaction, on_delete=models.PROTECT, related_name="entries")
    # No index of its own: ``entry_account_id`` (account, id) leads with it, and serves the
    # foreign key's lookups as well; one index fewer to write for every entry.
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="entries", db_index=False)
    amount = models.DecimalField(**MONEY)
    balance_after = models.DecimalField(null=True, blank=True, **MONEY)

    class Meta:
        verbose_name_plural = "ledger entries"
        indexes = [models.Index(fields=["account", "id"], name="entry_account_id")]
        constraints = [models.CheckConstraint(condition=~Q(amount=0), name="entry_amount_not_zero")]

    def __str__(self):
        return f"{self.transaction_id}:{self.account_id} {self.amount}"
