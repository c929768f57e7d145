"""Bets and their extra stakes (RULES 4, 6, 8). Written only by the services (``wagering.placement``,
``wagering.extras``, ``wagering.closing``, and ``settlement.services`` when a round is settled);
every amount here also exists as a ledger transaction (``stake:<bet>``, ``double:<bet>``, …)."""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from accounts.models import MONEY, Currency, Operator, Player
from tables.engine.payouts import OUTCOMES as ENGINE_OUTCOMES
from tables.models import Round, Table


class CopiedForeignKey(models.ForeignKey):
    """A foreign key that copies a value of the row's other relations when a row is inserted without
    it: ``copy_from`` is a dotted attribute path from the instance (``"round.table_id"``). Set by
    ``save()`` and ``bulk_create()`` alike (Django asks ``pre_save`` of every inserted field), so no
    ORM path can leave it out; plain-SQL inserts must set the column themselves."""

    def __init__(self, *args, copy_from, **kwargs):
        self.copy_from = copy_from
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        return name, path, args, {**kwargs, "copy_from": self.copy_from}

    def pre_save(self, model_instance, add):
        if add and getattr(model_instance, self.attname) is None:
            value = model_instance
            for name in self.copy_from.split("."):
                value = getattr(value, name)
            setattr(model_instance, self.attname, value)
        return super().pre_save(model_instance, add)


class Bet(models.Model):
    """One bet of a player on a round.

    - ``type``: ``Type``; ``seat``: the seat number for seat bets, behind and per-seat pair(s)
      (classic/premium), None in boundless.
    - ``stake``: the ORIGINAL stake (``Decimal``, major units); extra stakes are ``BetExtra`` rows.
    - ``state``: PLACED (stake debited) → ACCEPTED (betting closed) → SETTLED, or → REFUNDED.
    - ``idempotency_key``: the game server's key, unique per table (``bet_table_idempotency_key``):
      a table is one studio's, so a studio's keys never meet another's; a premium mirrored seat
      bet gets ``<key>#mirror``. ``record_id``: the bet's id in the round record (the game server's bet id,
      default its idempotency key), unique per round.
    - ``follow_double`` / ``follow_split``: a behind bet that followed the seat (RULES 6).
    - ``outcome`` / ``returned`` / ``settlement`` (the engine's detail): written by settlement.
    - ``table`` / ``currency``: copies of ``round.table`` and its currency at placement
      (``CopiedForeignKey``), so that bet lists, filters and totals need not join the rounds.

    Storage (migration ``0003_bet_hot_updates``): no index covers ``state``, ``outcome``,
    ``returned``, ``settled_at`` or ``settlement`` and the table keeps free room in each page (PostgreSQL
    ``fillfactor``), so closing betting and settling a round rewrite its bets in place (HOT updates:
    no index entry written); every index here serves a lookup of the services, the Bet Record or
    the player API.
    """

    class Type(models.TextChoices):
        MAIN = "main"
        BEHIND = "behind"
        PAIR = "pair"
        PAIRS = "pairs"
        BUST_BONUS = "bust_bonus"
        LUCKY_TRIO = "lucky_trio"
        POKER_TRIO = "poker_trio"

    class State(models.TextChoices):
        PLACED = "placed"
        ACCEPTED = "accepted"
        SETTLED = "settled"
        REFUNDED = "refunded"

    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="bets",
                              db_index=False)  # indexed by one_record_id_per_round
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="bets",
                               db_index=False)  # indexed by bet_player_placed
    table = CopiedForeignKey(Table, on_delete=models.PROTECT, related_name="+", db_index=False,
                             copy_from="round.table_id")  # indexed by bet_table_placed
    currency = CopiedForeignKey(Currency, on_delete=models.PROTECT, related_name="+", db_index=False,
                                copy_from="round.table.currency_id")
    type = models.CharField(max_length=16, choices=Type.choices)
    seat = models.PositiveSmallIntegerField(null=True, blank=True)
    stake = models.DecimalField(**MONEY)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PLACED)
    #: Bet-level outcomes: the engine's (docs/round-record.md "Result"; side bets win or lose) and
    #: ``void`` for a bet refunded in full (RULES 10).
    OUTCOMES = ENGINE_OUTCOMES + ("void",)

    outcome = models.CharField(max_length=32, null=True, blank=True)  # noqa: DJ001 (None: not settled yet)
    returned = models.DecimalField(null=True, blank=True, **MONEY)
    idempotency_key = models.CharField(max_length=128)  # unique per table: bet_table_idempotency_key
    record_id = models.CharField(max_length=128)
    follow_double = models.BooleanField(default=False)
    follow_split = models.BooleanField(default=False)
    placed_at = models.DateTimeField(default=timezone.now)
    settled_at = models.DateTimeField(null=True, blank=True)
    #: How the bet was settled (``settlement.SettlementDetail``, shared by the round's bets settled
    #: alike), set with ``outcome`` and ``returned``. Not indexed: settling must stay a HOT update.
    #: No constraint in the database either: PostgreSQL would check each settled bet's pointer at
    #: commit, a cost that grows with the round; settlement writes it in the transaction that
    #: writes the row it points at, and those rows are never deleted (PROTECT).
    settlement = models.ForeignKey("settlement.SettlementDetail", on_delete=models.PROTECT, null=True, blank=True,
                                   related_name="bets", db_index=False, db_constraint=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["round", "record_id"], name="one_record_id_per_round"),
            # a constraint, not unique=True: that also builds a LIKE index nothing searches with
            models.UniqueConstraint(fields=["table", "idempotency_key"], name="bet_table_idempotency_key"),
            models.CheckConstraint(condition=Q(stake__gt=0), name="bet_stake_positive"),
        ]
        indexes = [
            models.Index(fields=["player", "placed_at", "id"], name="bet_player_placed"),
            models.Index(fields=["placed_at", "id"], name="bet_placed"),
            models.Index(fields=["table", "placed_at", "id"], name="bet_table_placed"),
        ]

    def __str__(self):
        return f"{self.type} {self.stake} ({self.record_id})"

    # -- money of a bet read with ``wagering.selectors.with_money`` (its ``extras_total``) ----------

    @property
    def staked(self):
        """The original stake plus every extra stake (``Decimal``, major units)."""
        return bet_money(self.stake, self.extras_total, self.returned, self.state)[0]

    @property
    def returned_total(self):
        """Everything credited back: ``returned`` once settled, all that was staked once refunded,
        None while open (``Decimal``, major units)."""
        return bet_money(self.stake, self.extras_total, self.returned, self.state)[1]

    @property
    def net(self):
        """``returned_total - staked`` (negative: the player lost), None while open."""
        return bet_money(self.stake, self.extras_total, self.returned, self.state)[2]

    def stake_key(self):
        """Ledger key of the stake debit."""
        return f"stake:{self.pk}"

    def refund_key(self):
        """Ledger key of the stake's refund."""
        return f"refund:{self.pk}"


def bet_money(stake, extras_total, returned, state):
    """``(staked, returned_total, net)`` of a bet (``Bet.staked`` and the others) from its
    ``stake``, the sum of its extra stakes, its ``returned`` (None until settled) and its
    ``state``: a refunded bet got everything staked back (RULES 10). Amounts are ``Decimal``
    in major units; ``returned_total`` and ``net`` are None while the bet is open."""
    staked = stake + extras_total
    if returned is None and state == Bet.State.REFUNDED:
        returned = staked
    return staked, returned, None if returned is None else returned - staked


class BetExtra(models.Model):
    """An extra stake on a bet (RULES 4, 6): ``kind`` double / split / insurance / follow_double /
    follow_split, ``hand`` (1 = the first hand; 2 = the second split hand, for a double after a
    split), ``amount`` (``Decimal``, major units) and its ledger ``key``: ``<kind>:<bet>`` for hand 1,
    ``<kind>:<bet>:<hand>`` otherwise. Refunds use ``refund:<kind>:<bet>[:<hand>]``. ``cards``: a
    double's or split's hand as the game server named it (normalised codes), against which a
    replay is checked; null for the other kinds (and for extras taken before it was kept)."""

    class Kind(models.TextChoices):
        DOUBLE = "double"
        SPLIT = "split"
        INSURANCE = "insurance"
        FOLLOW_DOUBLE = "follow_double"
        FOLLOW_SPLIT = "follow_split"

    bet = models.ForeignKey(Bet, on_delete=models.PROTECT, related_name="extras")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    hand = models.PositiveSmallIntegerField(default=1)
    amount = models.DecimalField(**MONEY)
    key = models.CharField(max_length=128, unique=True)
    cards = models.JSONField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["bet", "kind", "hand"], name="one_extra_kind_per_hand"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="extra_amount_positive"),
        ]

    def __str__(self):
        return self.key

    @staticmethod
    def key_for(kind, bet_id, hand=1):
        """The ledger key of an extra stake (see the class docstring)."""
        return f"{kind}:{bet_id}" if hand == 1 else f"{kind}:{bet_id}:{hand}"

    def refund_key(self):
        """Ledger key of this extra stake's refund."""
        return f"refund:{self.key}"


# --- rollups (maintained by ``wagering.rollups``; docs/reports.md) ------------------------------------

class DailyRollup(models.Model):
    """The settled money of one ``day`` (a date in the operator's ``time_zone``: the day its bets
    were placed) of one ``operator``'s players at one ``table`` (in its ``currency``) for one
    ``bet_type``, kept as the money moves (``wagering.rollups``), in the database transaction of
    each settlement, void, resettle and refund. Money is ``Decimal`` in the currency's major units
    with its minor-unit decimals.

    - ``bets``, ``turnover``: the bets that stood (settled) and everything they staked, extra
      stakes included; ``returned``: everything they returned (stake back + winnings);
    - ``refunded_bets``, ``refunded``: the bets refunded in full (a void, a seat emptied at the
      close) and what they got back: not turnover;
    - ``rtp_staked``, ``rtp_returned``: the observed RTP's measure (``settlement.rtp_watch``): the
      original stakes of the bets that stood and what they returned for them, extra stakes and
      insurance taken out; ``rtp_returned / rtp_staked`` compares with the theoretical RTP.
    GGR = turnover - returned; hold = GGR / turnover."""

    day = models.DateField()
    operator = models.ForeignKey(Operator, on_delete=models.PROTECT, related_name="+")
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="+")
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT, related_name="+")
    bet_type = models.CharField(max_length=16, choices=Bet.Type.choices)
    bets = models.BigIntegerField(default=0)
    turnover = models.DecimalField(default=0, **MONEY)
    returned = models.DecimalField(default=0, **MONEY)
    refunded_bets = models.BigIntegerField(default=0)
    refunded = models.DecimalField(default=0, **MONEY)
    rtp_staked = models.DecimalField(default=0, **MONEY)
    rtp_returned = models.DecimalField(default=0, **MONEY)

    class Meta:
        verbose_name = "report"
        verbose_name_plural = "reports"
        constraints = [models.UniqueConstraint(fields=["operator", "day", "table", "bet_type"],
                                               name="one_rollup_per_operator_day_table_bet_type")]

    def __str__(self):
        return f"{self.day} {self.operator_id} {self.table_id} {self.bet_type}"


class DailyRound(models.Model):
    """A round counted on a ``day`` of an ``operator``: one of its players' bets placed that day
    (in the operator's zone) stood in the round (was settled). Written when the round is settled,
    removed when a settled round is voided; the rounds of any set of days, tables and operators
    are the distinct ``round`` of their rows."""

    day = models.DateField()
    operator = models.ForeignKey(Operator, on_delete=models.PROTECT, related_name="+")
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="+")
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT, related_name="+")
    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="+", db_index=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["operator", "day", "table", "round"],
                                               name="one_daily_round")]
        indexes = [models.Index(fields=["round"], name="daily_round_round")]

    def __str__(self):
        return f"{self.day} {self.operator_id} round {self.round_id}"


class DailyPlayer(models.Model):
    """A player counted on a ``day`` at a ``table``: they placed a bet there that day (in their
    operator's zone), whatever became of it. Written when betting closes on the round (or when a
    round is voided before it closed); the players of any set of days, tables and operators are
    the distinct ``player`` of their rows."""

    day = models.DateField()
    operator = models.ForeignKey(Operator, on_delete=models.PROTECT, related_name="+")
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="+")
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT, related_name="+")
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="+", db_index=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["operator", "day", "player", "table"],
                                               name="one_daily_player")]

    def __str__(self):
        return f"{self.day} {self.operator_id} player {self.player_id}"


class DailyAdjustment(models.Model):
    """The manual and dispute adjustments of one ``day`` (in the operator's zone, the day they were
    made) to one ``operator``'s players' wallets in one ``currency``: ``adjustments`` (how many)
    and ``adjusted`` (their sum, signed: > 0 credited to the players). Not wagering: they change
    neither turnover nor GGR."""

    day = models.DateField()
    operator = models.ForeignKey(Operator, on_delete=models.PROTECT, related_name="+")
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT, related_name="+")
    adjustments = models.BigIntegerField(default=0)
    adjusted = models.DecimalField(default=0, **MONEY)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["operator", "day", "currency"], name="one_daily_adjustment")]

    def __str__(self):
        return f"{self.day} {self.operator_id} {self.currency_id} adjustments"
