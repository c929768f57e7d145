"""Tables, their limits, seats, shoes, rounds and the rounds' append-only timeline.

Rules live in ``tables.engine`` (asked through ``Table.rules()``); writes go through the
services: ``tables.services`` (rounds opened, suspended, resumed; seats freed),
``wagering.placement`` and ``wagering.closing`` (seats taken, betting closed), and
``settlement.results``, ``settlement.services`` and ``settlement.voids`` (records taken, rounds
settled, cancelled and voided). Money columns use ``accounts.models.MONEY`` (``Decimal`` in the
currency's major units).
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone
from rest_framework_api_key.models import AbstractAPIKey, APIKeyManager

from accounts.models import MONEY, Currency, ImmutableModel, Operator, Player
from tables.exceptions import IllegalTransition


class Variant(models.TextChoices):
    """The three variants of docs/rules.md (the engine's ``VARIANTS``)."""

    CLASSIC = "classic", "Classic"
    PREMIUM = "premium", "Premium"
    BOUNDLESS = "boundless", "Boundless"


#: The studio the tables from before studios migrated to, and where a new table goes by default.
DEFAULT_STUDIO = "default"


class Studio(models.Model):
    """A live studio: it runs tables, and its game server reports their rounds and bets through
    its service accounts (``StudioAPIKey``), which act on this studio's tables only. ``code`` is
    unique whatever its case (``accounts.codes``)."""

    code = models.SlugField(max_length=32, unique=True)
    name = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(Lower("code"), name="studio_code_unique_ignoring_case",
                                               violation_error_message="A studio with this code, in any case, exists.")]

    def __str__(self):
        return self.code


def default_studio():
    """The pk of the ``DEFAULT_STUDIO`` (created if missing): a new table's studio unless given."""
    return Studio.objects.get_or_create(code=DEFAULT_STUDIO, defaults={"name": "Default studio"})[0].pk


class StudioAgreement(models.Model):
    """An operator's agreement with a studio: the ``operator``'s players may bet at the ``studio``'s
    tables. The game server's bets for a player whose operator has no agreement with the table's
    studio are refused as for an unknown player (``wagering.placement``). The provider's staff
    make and end them (the admin's studio agreements page; ``tables.studios.agree``)."""

    studio = models.ForeignKey(Studio, on_delete=models.PROTECT, related_name="agreements")
    operator = models.ForeignKey(Operator, on_delete=models.PROTECT, related_name="studio_agreements")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["studio", "operator"], name="one_agreement_per_studio_operator")]

    def __str__(self):
        return f"{self.operator_id} at {self.studio_id}"


class StudioAPIKeyManager(APIKeyManager):
    """The library's key manager; the keys it finds (``get_from_key``) come with their studio."""

    def get_usable_keys(self):
        return super().get_usable_keys().select_related("studio")


class StudioAPIKey(AbstractAPIKey):
    """A game-server service account of one ``studio`` (``Authorization: Bearer <key>`` on the
    game-server API): stored hashed (its ``prefix`` identifies it), shown once when created,
    revocable (``revoked``, for good). It acts on its studio's tables and their rounds only.
    ``signing_secret``: when set, every request of the key must also be signed with it
    (HMAC-SHA256, ``delivery.api.game.signing``); shown once when set, never on a page."""

    studio = models.ForeignKey(Studio, on_delete=models.PROTECT, related_name="api_keys")
    signing_secret = models.CharField(max_length=128, blank=True, editable=False)

    objects = StudioAPIKeyManager()

    class Meta(AbstractAPIKey.Meta):
        verbose_name = "game-server API key"
        verbose_name_plural = "game-server API keys"

    @property
    def actor(self):
        """How the timeline names this service account: ``game-server:<studio>/<key name>``."""
        return f"game-server:{self.studio.code}/{self.name}"


class Table(models.Model):
    """A live table of one ``studio``: ``code`` (``CL-1``, the house account is
    ``table:<code>``; unique whatever its case, ``accounts.codes``), ``variant``, ``currency``, ``status``.

    - ``pay_tables``: operator overrides of the variant's default odds, ``{bet_type: {pattern: "odds"}}``
      (odds as decimal strings, ``"6"`` = 6:1); empty = the defaults (RULES 5, 8). Validated by
      ``tables.engine.ruleset``.
    - ``penetration``: cut-card position, percent of the shoe dealt before the cut card (RULES 1).
    - ``seats``: 7 for classic/premium, ``None`` for boundless (RULES 9).
    - ``suspend_limit_seconds``: settlement voids a round SUSPENDED longer than this (RULES 10).
    Limits per bet type are ``TableLimit`` rows.
    """

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        PAUSED = "paused", "Paused"
        CLOSED = "closed", "Closed"

    code = models.SlugField(max_length=32, unique=True)
    name = models.CharField(max_length=100)
    studio = models.ForeignKey(Studio, on_delete=models.PROTECT, related_name="tables", default=default_studio)
    variant = models.CharField(max_length=16, choices=Variant.choices)
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT, related_name="tables")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    pay_tables = models.JSONField(default=dict, blank=True)
    penetration = models.PositiveSmallIntegerField(default=75)
    seats = models.PositiveSmallIntegerField(null=True, blank=True)
    suspend_limit_seconds = models.PositiveIntegerField(default=600)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(penetration__gte=10, penetration__lte=95),
                                   name="table_penetration_10_95"),
            models.CheckConstraint(condition=Q(variant="boundless", seats__isnull=True)
                                   | (~Q(variant="boundless") & Q(seats__gte=1, seats__lte=7)),
                                   name="table_seats_match_variant"),
            models.UniqueConstraint(Lower("code"), name="table_code_unique_ignoring_case",
                                    violation_error_message="A table with this code, in any case, exists."),
        ]

    def __str__(self):
        return self.code

    @property
    def house_name(self):
        """The name of the table's house account in the ledger (``table:<code>``)."""
        return f"table:{self.code}"

    def rules(self):
        """The table's ``tables.engine.RuleSet`` (variant + pay-table overrides). Raises ``ValueError``
        for bad overrides. The engine is imported here, not at module import, so that models load
        even while the engine is being changed."""
        from tables.engine import ruleset
        return ruleset(self.variant, self.pay_tables or None)

    #: What a table keeps once it has a round: its rounds' bets were staked in its currency, from
    #: wallets in it, to its house account (named after its code: ``table:<code>``) in it, and
    #: their records follow its variant's rules; settling, voiding or resettling them reads all
    #: three from the table (and the game server calls the table by its code).
    FIXED_ONCE_PLAYED = ("code", "variant", "currency")

    def clean(self):
        """Check the pay tables with the engine and the seat count against the variant, and that
        a table with rounds keeps its ``FIXED_ONCE_PLAYED`` fields (a ``ValidationError`` names
        them: open a new table instead)."""
        if self.pk is not None and self.rounds.exists():
            columns = {f: self._meta.get_field(f).attname for f in self.FIXED_ONCE_PLAYED}
            stored = Table.objects.filter(pk=self.pk).values(*columns.values()).first() or {}
            changed = [f for f, column in columns.items() if stored.get(column) != getattr(self, column)]
            if changed:
                raise ValidationError({f: f"the table has rounds: its {f} is fixed (their bets, wallets and "
                                          "house account hang on it); open a new table instead" for f in changed})
        try:
            rules = self.rules()
        except ValueError as e:
            raise ValidationError({"pay_tables": str(e)}) from None
        if rules.seats != self.seats:
            raise ValidationError({"seats": f"{self.variant} tables have {rules.seats or 'no'} seats"})


class TableLimit(models.Model):
    """Stake limits of one bet type at a table: ``min_stake`` ≤ stake ≤ ``max_stake``, and the stake
    is a multiple of ``chip_step`` (all ``Decimal`` in the table currency's major units)."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="limits")
    bet_type = models.CharField(max_length=16)
    min_stake = models.DecimalField(**MONEY)
    max_stake = models.DecimalField(**MONEY)
    chip_step = models.DecimalField(**MONEY)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "bet_type"], name="one_limit_per_table_bet_type"),
            models.CheckConstraint(condition=Q(min_stake__gt=0, chip_step__gt=0, max_stake__gte=models.F("min_stake")),
                                   name="limit_sane"),
        ]

    def __str__(self):
        return f"{self.table_id} {self.bet_type} {self.min_stake}-{self.max_stake}/{self.chip_step}"


class Seat(models.Model):
    """Seat ``number`` (1-7) of a classic/premium table, its ``player`` (None = free) and
    ``rounds_without_bet``: rounds in a row its occupant placed no seat bet (RULES 9: one grace
    round, unseated after the second)."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="seat_set")
    number = models.PositiveSmallIntegerField()
    player = models.ForeignKey(Player, null=True, blank=True, on_delete=models.PROTECT, related_name="seats")
    rounds_without_bet = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["table", "number"]
        constraints = [
            models.UniqueConstraint(fields=["table", "number"], name="one_seat_number_per_table"),
            models.CheckConstraint(condition=Q(number__gte=1, number__lte=7), name="seat_number_1_7"),
        ]

    def __str__(self):
        return f"{self.table_id}#{self.number}"


class Shoe(models.Model):
    """One shuffled shoe of a table: ``sequence`` (1, 2, … per table), ``shuffled_at``,
    ``burn_count`` (cards burnt after the shuffle, RULES 1), ``rounds_dealt`` and ``cut_card_out``
    (the cut card came out: the round in progress is the last of the shoe; also set when a classic
    host disconnection forces a reshuffle, RULES 10)."""

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="shoes")
    sequence = models.PositiveIntegerField()
    shuffled_at = models.DateTimeField(default=timezone.now)
    burn_count = models.PositiveSmallIntegerField(default=0)
    rounds_dealt = models.PositiveIntegerField(default=0)
    cut_card_out = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["table", "sequence"], name="one_shoe_sequence_per_table")]

    def __str__(self):
        return f"{self.table_id} shoe {self.sequence}"

    @property
    def title(self):
        """``TABLE-CODE shoe N`` (needs ``table`` loaded)."""
        return f"{self.table.code} shoe {self.sequence}"


def rules_version_now():
    """The engine's ``RULES_VERSION`` (a round's ``rules_version`` when it opens)."""
    from tables.engine import RULES_VERSION
    return RULES_VERSION


class Round(models.Model):
    """One round of a table, identified by the game server's ``external_id`` (unique per table).

    State machine (``TRANSITIONS``): OPEN → CLOSED → (SUSPENDED ↔ CLOSED) → RESULTED → SETTLED;
    RESULTED → SETTLEMENT_FAILED (record cannot be settled) → SETTLED (resettled) or VOIDED;
    OPEN / CLOSED / SUSPENDED / RESULTED → VOIDED (every stake refunded, RULES 10); SETTLED → VOIDED
    is a reversal (every return taken back, every stake refunded, by new ledger entries).
    ``cancelled_at`` marks a round that was cancelled (RULES 10): it keeps its state until
    settlement's void, takes no bet and makes no other move (``transition`` allows only VOIDED).
    ``record`` is the round record (docs/round-record.md) as received, kept as evidence, never changed.
    ``pay_tables``: the table's pay-table overrides in force when the round opened; the round is
    priced with them (``rules``) however the table's odds change later (RULES 5, 8).
    ``rules_version``: the engine's ``RULES_VERSION`` when the round opened (its game record's).
    """

    class State(models.TextChoices):
        OPEN = "open", "Open (betting)"
        CLOSED = "closed", "Betting closed"
        SUSPENDED = "suspended", "Suspended"
        RESULTED = "resulted", "Resulted"
        SETTLED = "settled", "Settled"
        SETTLEMENT_FAILED = "settlement_failed", "Settlement failed"
        VOIDED = "voided", "Voided"

    TRANSITIONS = {
        State.OPEN: {State.CLOSED, State.VOIDED},
        State.CLOSED: {State.SUSPENDED, State.RESULTED, State.VOIDED},
        State.SUSPENDED: {State.CLOSED, State.VOIDED},
        State.RESULTED: {State.SETTLED, State.SETTLEMENT_FAILED, State.VOIDED},
        State.SETTLEMENT_FAILED: {State.SETTLED, State.VOIDED},
        State.SETTLED: {State.VOIDED},  # a reversal: every return taken back, every stake refunded
        State.VOIDED: set(),
    }
    #: The timestamp column each state sets when entered.
    STAMPS = {State.CLOSED: "closed_at", State.SUSPENDED: "suspended_at", State.RESULTED: "resulted_at",
              State.SETTLED: "settled_at", State.VOIDED: "voided_at"}
    #: States in which a round is still being played (a table has at most one).
    IN_PLAY = (State.OPEN, State.CLOSED, State.SUSPENDED)

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="rounds")
    shoe = models.ForeignKey(Shoe, on_delete=models.PROTECT, related_name="rounds")
    shoe_round = models.PositiveIntegerField()
    external_id = models.CharField(max_length=64)
    state = models.CharField(max_length=20, choices=State.choices, default=State.OPEN, db_index=True)
    record = models.JSONField(null=True, blank=True)
    pay_tables = models.JSONField(default=dict, blank=True, editable=False)
    rules_version = models.CharField(max_length=16, default=rules_version_now, editable=False)
    failure_reason = models.TextField(blank=True)
    opened_at = models.DateTimeField(default=timezone.now, db_index=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    suspended_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    resulted_at = models.DateTimeField(null=True, blank=True)
    settled_at = models.DateTimeField(null=True, blank=True)
    voided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "external_id"], name="one_external_id_per_table"),
            models.UniqueConstraint(fields=["table"], condition=Q(state__in=["open", "closed", "suspended"]),
                                    name="one_round_in_play_per_table"),
        ]
        indexes = [models.Index(fields=["table", "opened_at"], name="round_table_opened")]

    def __str__(self):
        return f"{self.table_id}/{self.external_id}"

    def rules(self):
        """The ``RuleSet`` this round is settled, resettled and replayed by: its table's variant
        (fixed once played) with the pay tables the round opened with. Raises ``ValueError``."""
        from tables.engine import ruleset
        return ruleset(self.table.variant, self.pay_tables or None)

    def result_of(self, record):
        """The engine's ``RoundResult`` of ``record`` (a decoded round record, docs/round-record.md)
        under this round's rules (``rules``) in its table's currency (``table.currency`` loaded):
        the one way the platform settles, checks and replays a record. Raises the engine's
        ``InvalidRecord`` (its ``path`` names the field) or ``ValueError`` (bad pay tables)."""
        from tables.engine import settle
        return settle(record, rules=self.rules(), minor_units=self.table.currency.minor_units)

    @property
    def title(self):
        """The round as operators name it: ``TABLE-CODE/external id`` (external ids repeat across
        tables). Needs ``table`` loaded."""
        return f"{self.table.code}/{self.external_id}"

    def transition(self, to, *, at=None):
        """Move to state ``to`` (a ``Round.State``) in memory, stamping its timestamp; the caller
        saves under a row lock. Raises ``IllegalTransition`` when ``TRANSITIONS`` forbids it or the
        round is cancelled and ``to`` is not VOIDED."""
        if to not in self.TRANSITIONS[self.State(self.state)] or (self.cancelled_at and to != self.State.VOIDED):
            now = f"{self.state}, cancelled" if self.cancelled_at else self.state
            raise IllegalTransition(f"round {self.pk} cannot go from {now} to {to}", state=self.state)
        self.state = to
        if to in self.STAMPS:
            setattr(self, self.STAMPS[to], at or timezone.now())


class RoundEvent(ImmutableModel):
    """One line of a round's timeline, never changed nor deleted. ``kind`` is one of ``Kind`` (other
    apps add their own kinds, e.g. settlement's ``refunded``/``reversed``/``resettled``/
    ``settlement_failed``: the column takes any short string). ``actor`` names who did it
    (``game-server:<user>``, ``operator:<user>``, ``system``), ``actor_user`` the Django user if any;
    ``payload`` is JSON (money as decimal strings)."""

    class Kind(models.TextChoices):
        OPENED = "opened"
        SEATED = "seated"
        UNSEATED = "unseated"
        BET_PLACED = "bet_placed"
        BET_REJECTED = "bet_rejected"
        BETTING_CLOSED = "betting_closed"
        SEAT_EMPTIED = "seat_emptied"
        BET_REFUNDED = "bet_refunded"
        EXTRA_STAKE = "extra_stake"
        FALLBACK = "fallback"
        CARD_SCANNED = "card_scanned"
        CARD_RESCANNED = "card_rescanned"
        DECISION = "decision"
        AUTO_PLAY = "auto_play"
        SUSPENDED = "suspended"
        RESUMED = "resumed"
        CANCELLED = "cancelled"
        RESULTED = "resulted"
        SETTLED = "settled"
        VOIDED = "voided"

    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="events")
    kind = models.CharField(max_length=32, choices=Kind.choices)
    actor = models.CharField(max_length=100, blank=True)
    actor_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    payload = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["round", "id"]
        indexes = [models.Index(fields=["round", "id"], name="event_round_id")]

    def __str__(self):
        return f"{self.round_id} {self.kind}"


class TheoreticalRtp(models.Model):
    """A cached exact RTP report (``tables.engine.rtp.report``) of one rule set, shared by every
    table with the same variant and effective pay tables. ``key``: ``tables.rtp.rules_key`` (a
    SHA-256 of the variant and its pay tables in force); ``report``: the JSON report (RTP as
    fractions, e.g. 0.9952); ``computed_at``. Written by ``tables.rtp``; any row can be deleted
    (it is computed again)."""

    key = models.CharField(max_length=64, unique=True)
    variant = models.CharField(max_length=16, choices=Variant.choices)
    report = models.JSONField()
    computed_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"{self.variant} RTP {self.key[:12]}"
