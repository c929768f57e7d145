"""Operators (casino brands) with their API keys, staff and player sessions; players, currencies,
ledger accounts (player wallets, house and cashier accounts) and the double-entry ledger. Balances
change only through ``accounts.services.post``; rows here are never edited by hand (ledger rows
are immutable, enforced in ``save``/``delete`` and by a database trigger on PostgreSQL)."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from rest_framework_api_key.models import AbstractAPIKey, APIKeyManager
from timezone_field import TimeZoneField

from .addresses import WalletAddressRefused, check_url

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


#: The operator the platform's data migrated to, whose players the game server names by their
#: code alone (other operators' players are ``<operator>:<code>``).
DEFAULT_OPERATOR = "default"


def default_time_zone():
    """A new operator's reporting zone: ``settings.OPERATOR_TIME_ZONE`` (read when it is created)."""
    return settings.OPERATOR_TIME_ZONE


class Operator(models.Model):
    """A casino brand: it owns its players and, in ``transfer`` mode, moves their money in and out
    of the platform's wallets through the operator API; in ``seamless`` mode it keeps the money in
    its own wallet at ``wallet_url`` (calls signed with ``wallet_secret``, each waiting at most
    ``wallet_timeout_ms``, at most ``wallet_concurrency`` in flight per batch: a bet batch's
    debits, a round's credits; None: ``WALLET_CONCURRENCY``). ``currencies``: the currencies its
    players may hold and play. ``time_zone``: the IANA zone its days are counted in (its reports
    and rollups: a bet belongs to the day it was placed in this zone), fixed once it has players.
    ``code`` is unique whatever its case (``accounts.codes``)."""

    class WalletMode(models.TextChoices):
        TRANSFER = "transfer", "Transfer (the platform's wallets)"
        SEAMLESS = "seamless", "Seamless (the operator's wallet)"

    code = models.SlugField(max_length=32, unique=True)
    name = models.CharField(max_length=100)
    wallet_mode = models.CharField(max_length=8, choices=WalletMode.choices, default=WalletMode.TRANSFER)
    currencies = models.ManyToManyField(Currency, related_name="operators", blank=True)
    wallet_url = models.URLField(blank=True)
    wallet_secret = models.CharField(max_length=128, blank=True)
    wallet_timeout_ms = models.PositiveIntegerField(default=3000)
    wallet_concurrency = models.PositiveSmallIntegerField(null=True, blank=True)
    time_zone = TimeZoneField(default=default_time_zone, use_pytz=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~Q(code__contains=":"), name="operator_code_has_no_colon"),
            models.UniqueConstraint(Lower("code"), name="operator_code_unique_ignoring_case",
                                    violation_error_message="An operator with this code, in any case, exists."),
            models.CheckConstraint(condition=Q(wallet_mode="transfer") | ~Q(wallet_url="") & ~Q(wallet_secret=""),
                                   name="seamless_operator_has_wallet"),
        ]

    def __str__(self):
        return self.code

    #: What an operator keeps once it has players: their wallets are the platform's own or journals
    #: of the operator's (``Account.journal``), by the mode they were opened in; their bets are
    #: counted in its rollups on the days of its zone.
    FIXED_ONCE_PLAYED = ("code", "wallet_mode", "time_zone")

    def clean(self):
        """Refuse a change of ``FIXED_ONCE_PLAYED`` once the operator has players, and a
        ``wallet_url`` at an address no wallet may have (``accounts.addresses.check_url``: its
        name is looked up now). A ``ValidationError`` names each field."""
        errors = {}
        if self.pk is not None and self.players.exists():
            stored = Operator.objects.filter(pk=self.pk).values(*self.FIXED_ONCE_PLAYED).first() or {}
            changed = [f for f in self.FIXED_ONCE_PLAYED if stored.get(f) != getattr(self, f)]
            errors.update({f: f"the operator has players: its {f} is fixed" for f in changed})
        if self.wallet_url:
            try:
                check_url(self.wallet_url)
            except WalletAddressRefused as refused:
                errors["wallet_url"] = str(refused)
        if errors:
            raise ValidationError(errors)

    def game_code(self, code):
        """The name the game server and round records use for this operator's player ``code``."""
        return code if self.code == DEFAULT_OPERATOR else f"{self.code}:{code}"


class OperatorAPIKeyManager(APIKeyManager):
    """The library's key manager; the keys it finds (``get_from_key``) come with their operator."""

    def get_usable_keys(self):
        return super().get_usable_keys().select_related("operator")


class OperatorAPIKey(AbstractAPIKey):
    """A key of the operator API (``Authorization: Bearer <key>``): stored hashed (its ``prefix``
    identifies it, the rest is checked against ``hashed_key``), shown once when created,
    revocable (``revoked``, for good). It acts only on its ``operator``'s players and data."""

    operator = models.ForeignKey(Operator, on_delete=models.PROTECT, related_name="api_keys")

    objects = OperatorAPIKeyManager()

    class Meta(AbstractAPIKey.Meta):
        verbose_name = "operator API key"
        verbose_name_plural = "operator API keys"


class OperatorAPICall(models.Model):
    """One call of the operator API, kept as its audit: which ``key`` (and so which operator), the
    ``method`` and ``path``, the HTTP ``status`` answered, when."""

    key = models.ForeignKey(OperatorAPIKey, on_delete=models.PROTECT, related_name="calls")
    operator = models.ForeignKey(Operator, on_delete=models.PROTECT, related_name="+")
    method = models.CharField(max_length=8)
    path = models.CharField(max_length=255)
    status = models.PositiveSmallIntegerField()
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "operator API call"
        indexes = [models.Index(fields=["operator", "at"], name="operator_call_at")]

    def __str__(self):
        return f"{self.method} {self.path} {self.status}"


class OperatorStaff(models.Model):
    """A staff user of one operator: in the admin they see only that operator's players, bets,
    rounds' bets, disputes and reports. Staff without this row are the provider's (they see all)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="operator_staff")
    operator = models.ForeignKey(Operator, on_delete=models.PROTECT, related_name="staff")

    class Meta:
        verbose_name_plural = "operator staff"

    def __str__(self):
        return f"{self.user} ({self.operator})"


class Player(models.Model):
    """A player of one ``operator``, linked to a Django user (the player API's identity).

    - ``code``: the operator's id of the player, unique within the operator;
    - ``game_code``: the name the game server and round records use: ``code`` at the default
      operator, ``<operator>:<code>`` at the others (``Operator.game_code``); unique;
    - ``account_kind``: ``real`` or ``trial`` (RULES 9), set by the operator;
    - ``display_name``: optional, the operator's.
    ``operator`` and ``code`` never change once the player exists."""

    class Kind(models.TextChoices):
        REAL = "real", "Real"
        TRIAL = "trial", "Trial"

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="player")
    operator = models.ForeignKey(Operator, on_delete=models.PROTECT, related_name="players")
    code = models.CharField(max_length=64)
    game_code = models.CharField(max_length=100, unique=True)
    account_kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.REAL)
    display_name = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["operator", "code"], name="one_player_code_per_operator")]

    def __str__(self):
        return self.game_code


class PlayerSession(models.Model):
    """A player's session of the player API (``Authorization: Bearer <token>``), minted by the
    player's operator for one ``currency``. Only a hash of the token is stored (``token_hash``,
    SHA-256 hex). It ends at ``expires_at`` (its absolute lifetime), after
    ``PLAYER_SESSION_IDLE_SECONDS`` without use (``last_used_at``), or when revoked."""

    token_hash = models.CharField(max_length=64, unique=True)
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="sessions")
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"session {self.pk} of {self.player_id}"


class Account(models.Model):
    """A ledger account in one currency.

    - ``wallet``: a player's money; one per player per currency; its ``balance`` is kept up to date
      under a row lock and may never go below zero, except through a reversal of a settled round,
      which sets ``negative_flagged`` for operators. A player of a seamless operator keeps the
      money in the operator's wallet: their wallet here is a ``journal`` of what the platform moved
      through the operator's (its balance is the net of those movements, below zero as soon as
      the player has lost; the operator decides funds, so there is no overdraft check).
    - ``house``: the house side of one table (``name`` = ``table:<code>``) for one operator in one
      currency, or an operator's ``adjustments`` account.
    - ``cashier``: where an operator's deposits come from and withdrawals go, one per currency.

    Every account is its ``operator``'s (a wallet: its player's); a posting never crosses operators,
    so each operator's accounts of a currency sum to zero.

    House and cashier balances are not kept in a column (they would be a hot row every bet
    contends for): they are the sum of their entries (``accounts.selectors.account_balance``).
    """

    class Kind(models.TextChoices):
        WALLET = "wallet", "Player wallet"
        HOUSE = "house", "House"
        CASHIER = "cashier", "Cashier"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    operator = models.ForeignKey(Operator, on_delete=models.PROTECT, related_name="accounts")
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT, related_name="accounts")
    player = models.ForeignKey(Player, null=True, blank=True, on_delete=models.PROTECT, related_name="wallets")
    name = models.CharField(max_length=64, blank=True)
    balance = models.DecimalField(default=0, **MONEY)
    negative_flagged = models.BooleanField(default=False)
    journal = models.BooleanField(default=False)
    #: The ``chain_hash`` of the last ledger transaction of this account's chain (``accounts.chain``),
    #: None until its first; written by ``accounts.services.post`` with the balance.
    chain_head = models.BinaryField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["player", "currency"], condition=Q(kind="wallet"),
                                    name="one_wallet_per_player_currency"),
            models.UniqueConstraint(fields=["operator", "kind", "name", "currency"], condition=~Q(kind="wallet"),
                                    name="one_named_account_per_operator_currency"),
            models.CheckConstraint(condition=Q(kind="wallet", player__isnull=False)
                                   | (~Q(kind="wallet") & Q(player__isnull=True)),
                                   name="wallet_has_player"),
            models.CheckConstraint(condition=~Q(kind="wallet") | Q(balance__gte=0) | Q(negative_flagged=True)
                                   | Q(journal=True), name="wallet_not_negative"),
            models.CheckConstraint(condition=Q(kind="wallet") | Q(journal=False), name="only_wallets_are_journals"),
        ]

    def __str__(self):
        if self.is_wallet:
            return f"{self.player_id and self.player.game_code} {self.currency_id}"
        return f"{self.name} {self.currency_id}"

    @property
    def is_wallet(self):
        return self.kind == self.Kind.WALLET

    @property
    def known_balance(self):
        """The player's money as the platform knows it, the one balance any decision reads (a seat
        kept, a mirror's stake, an extra stake covered, a negative wallet alerted): a transfer
        wallet's ``balance``; None for a journal wallet, whose money the operator keeps (its
        ``balance`` is the net of the platform's movements, not the player's money)."""
        return None if self.journal else self.balance


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
    idempotency ``key`` such as ``stake:<bet>``, ``payout:<bet>``, ``refund:<bet>``, ``adjust:<dispute>``.

    A link of its chain (``accounts.chain``: its wallet's): ``prev_hash`` is the previous link's
    ``chain_hash`` (None for a chain's first), ``chain_hash`` the SHA-256 of ``prev_hash`` and the
    transaction's content, both written with the row by ``accounts.services.post``.

    Its ``currency`` and an entry's ``transaction`` and ``account`` are references the database
    checks once per statement rather than once per row (migration 0013): a
    settlement writes tens of thousands of ledger rows in one statement. On PostgreSQL its ``key``
    is in collation "C" (migration 0015): its unique index serves exact and prefix lookups alike."""

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
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT, db_constraint=False)
    memo = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    prev_hash = models.BinaryField(null=True, blank=True, editable=False)
    chain_hash = models.BinaryField(null=True, blank=True, editable=False)

    def __str__(self):
        return self.key


class LedgerEntry(ImmutableModel):
    """One leg of a transaction: ``amount`` is signed (credit to the account > 0, debit < 0), in the
    currency's major units. ``balance_after`` is the wallet's balance after this entry (wallets only)."""

    transaction = models.ForeignKey(LedgerTransaction, on_delete=models.PROTECT, related_name="entries",
                                    db_constraint=False)
    # No index of its own: ``entry_account_id`` (account, id) leads with it, and serves the
    # reference's check on deleting an account as well; one index fewer to write for every entry.
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="entries", db_index=False,
                                db_constraint=False)
    amount = models.DecimalField(**MONEY)
    balance_after = models.DecimalField(null=True, blank=True, **MONEY)

    class Meta:
        verbose_name_plural = "ledger entries"
        indexes = [models.Index(fields=["account", "id"], name="entry_account_id")]
        constraints = [models.CheckConstraint(condition=~Q(amount=0), name="entry_amount_not_zero")]

    def __str__(self):
        return f"{self.transaction_id}:{self.account_id} {self.amount}"
