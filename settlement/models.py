"""Settlement's rows: the settled details of bets, record corrections, operator alerts, disputes and
the operator audit trail. Written only by settlement's services (``services``, ``disputes``,
``alerts``, ``audit``, ``jobs``, ``rtp_watch``); money columns use ``accounts.models.MONEY``
(``Decimal`` in the currency's major units).
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from accounts.models import MONEY, Currency, ImmutableModel, Operator, Player
from tables.exceptions import IllegalTransition
from tables.models import Round, Table
from wagering.models import Bet


class SettlementDetail(models.Model):
    """How bets of ``round`` were settled (docs/round-record.md "Result"): ``detail`` is the engine's
    ``BetResult.to_dict()`` (hands with cards, score, outcome, stake, ``odds`` N of N:1 and return
    rounded down to the minor unit (RULES 5); insurance; side-bet ``pattern``), so a page can show
    "stake × (odds + 1), rounded down"; without the record's ids (``settlement.details``), so
    that bets settled alike share ONE row (the many bets of a boundless round need few rows), and
    each bet points at its own (``Bet.settlement``). ``correction`` is the
    ``RoundCorrection`` sequence it was computed from (0 = the original record). Never rewritten:
    a resettle writes the correction's own rows and points the bets at them, so the earlier
    details stay as evidence; a void keeps the pointers."""

    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="settlement_details")
    correction = models.PositiveIntegerField(default=0)
    detail = models.JSONField()
    settled_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"settlement detail {self.pk} of round {self.round_id} (correction {self.correction})"


class PendingSettlement(models.Model):
    """The settlement of a RESULTED ``round`` as the engine computed it when its record was taken
    (``settlement.plans``): per distinct kind of bet its detail, outcome and return (``details``:
    ``[[detail, outcome, "returned"], ...]``), and per bet, in the record's order, its pk, its
    player and its kind (``bets``, ``players``, ``kinds``: comma-separated integers, compact for
    the thousands of bets of a boundless round); the round's ``totals``: ``["staked", "returned"]``
    (decimal strings as the engine writes them). Written by ``settlement.results.record_result``,
    read and deleted when the round is settled (``settlement.services.settle_round``) or voided."""

    round = models.OneToOneField(Round, on_delete=models.PROTECT, primary_key=True, related_name="+")
    bets = models.TextField()
    players = models.TextField()
    kinds = models.TextField()
    details = models.JSONField()
    totals = models.JSONField()

    def __str__(self):
        return f"pending settlement of round {self.round_id}"


class RoundCorrection(models.Model):
    """A corrected round record after a proven misread card (RULES 10), kept beside the original
    (``Round.record`` never changes): ``sequence`` 1, 2, … per round; the round's effective record is
    its last correction, else the original (``settlement.selectors.effective_record``)."""

    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="corrections")
    sequence = models.PositiveIntegerField()
    record = models.JSONField()
    reason = models.TextField()
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                              related_name="+")
    actor_label = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["round", "sequence"]
        constraints = [models.UniqueConstraint(fields=["round", "sequence"], name="one_correction_sequence_per_round")]

    def __str__(self):
        return f"{self.round_id} correction {self.sequence}"


class Alert(models.Model):
    """Something operators must look at: a ledger breach found by the hourly reconcile, a round that
    could not be settled or whose settlement keeps failing, a wallet taken negative by a reversal or
    resettle, an observed RTP too far from the theoretical figure (``settlement.rtp_watch``), an
    operator's wallet failing a movement. ``player``: the player an alert is about (a negative
    wallet's, a failing wallet movement's), whose operator's staff see it; None for the provider's
    alerts (tables, rounds, the ledger as a whole). ``payload`` is JSON (money as decimal strings).
    Acknowledged by setting ``acknowledged_at``/``acknowledged_by``."""

    class Kind(models.TextChoices):
        RECONCILE_BREACH = "reconcile_breach", "Ledger breach"
        SETTLEMENT_FAILED = "settlement_failed", "Settlement failed"
        SETTLEMENT_STUCK = "settlement_stuck", "Round resulted long ago, still not settled"
        NEGATIVE_WALLET = "negative_wallet", "Wallet negative after a reversal"
        RTP_DEVIATION = "rtp_deviation", "Observed RTP off the theoretical figure"
        WALLET_FAILING = "wallet_failing", "An operator's wallet keeps failing a movement"
        BEAT_JOB_FAILING = "beat_job_failing", "A beat job could not be queued"
        TASK_LOST = "task_lost", "A worker process died under a task"

    class Severity(models.TextChoices):
        INFO = "info", "Info"
        WARNING = "warning", "Warning"
        CRITICAL = "critical", "Critical"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    severity = models.CharField(max_length=8, choices=Severity.choices, default=Severity.WARNING)
    table = models.ForeignKey(Table, null=True, blank=True, on_delete=models.PROTECT, related_name="alerts")
    round = models.ForeignKey(Round, null=True, blank=True, on_delete=models.PROTECT, related_name="alerts")
    player = models.ForeignKey(Player, null=True, blank=True, on_delete=models.PROTECT, related_name="alerts")
    message = models.TextField()
    payload = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                        related_name="+")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["acknowledged_at", "created_at"], name="alert_open")]

    def __str__(self):
        return f"{self.kind}: {self.message[:60]}"


class Dispute(models.Model):
    """A player's complaint about some of their own bets.

    Status: OPEN → INVESTIGATING → UPHELD or REJECTED (``TRANSITIONS``; ``transition`` raises
    ``IllegalTransition``). ``adjustment``: the signed amount credited (> 0) or debited (< 0) when
    upheld, in ``currency``'s major units, posted as ``adjust:dispute:<pk>``."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        INVESTIGATING = "investigating", "Investigating"
        UPHELD = "upheld", "Upheld"
        REJECTED = "rejected", "Rejected"

    TRANSITIONS = {
        Status.OPEN: {Status.INVESTIGATING},
        Status.INVESTIGATING: {Status.UPHELD, Status.REJECTED},
        Status.UPHELD: set(),
        Status.REJECTED: set(),
    }

    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="disputes")
    bets = models.ManyToManyField(Bet, related_name="disputes")
    reason = models.TextField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN, db_index=True)
    assignee = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                 related_name="assigned_disputes")
    resolution = models.TextField(blank=True)
    adjustment = models.DecimalField(null=True, blank=True, **MONEY)
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="+")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["player", "created_at"], name="dispute_player_created")]

    def __str__(self):
        return f"dispute {self.pk} ({self.status})"

    @property
    def adjustment_key(self):
        """Ledger key of the upheld adjustment."""
        return f"adjust:dispute:{self.pk}"

    def transition(self, to):
        """Move to status ``to`` in memory (the caller saves under a row lock); stamps ``resolved_at``
        on UPHELD/REJECTED. Raises ``IllegalTransition``."""
        if to not in self.TRANSITIONS[self.Status(self.status)]:
            raise IllegalTransition(f"dispute {self.pk} cannot go from {self.status} to {to}", state=self.status)
        self.status = to
        if to in (self.Status.UPHELD, self.Status.REJECTED):
            self.resolved_at = timezone.now()


class DisputeNote(models.Model):
    """An operator's (or the player's) note on a dispute; append-only."""

    dispute = models.ForeignKey(Dispute, on_delete=models.CASCADE, related_name="notes")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    text = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["dispute", "created_at", "id"]

    def __str__(self):
        return f"note {self.pk} on dispute {self.dispute_id}"


class OperatorAction(ImmutableModel):
    """Audit row of one operator action (docs/architecture.md: who, when, what, why), written by the service
    that performs it (``settlement.audit.record``). ``actor`` is the Django user (None for the system,
    e.g. the beat voiding a round suspended too long), ``actor_label`` a readable name
    (``operator:<username>``, ``system``, ``game-server:<user>``). ``target_model`` is a model label
    (``tables.round``), ``target_pk`` its primary key as a string (``*``: a search, as a CSV
    export's). ``operator``: the operator whose
    object it acted on (a dispute's, a wallet's, a player's alert's), whose staff see the row; None
    for the provider's (a round, shared by every operator). ``payload``: JSON, money as strings.
    Rows are immutable, as the ledger's (``save``/``delete`` refuse; a trigger on PostgreSQL)."""

    class Action(models.TextChoices):
        VOID_ROUND = "void_round", "Void round"
        REVERSE_ROUND = "reverse_round", "Reverse settled round"
        RESETTLE_ROUND = "resettle_round", "Resettle round"
        ASSIGN_DISPUTE = "assign_dispute", "Assign dispute"
        RESOLVE_DISPUTE = "resolve_dispute", "Resolve dispute"
        MANUAL_ADJUSTMENT = "manual_adjustment", "Manual adjustment"
        ACKNOWLEDGE_ALERT = "acknowledge_alert", "Acknowledge alert"
        RETRY_MOVEMENT = "retry_movement", "Retry wallet movement"
        REQUEST_ADJUSTMENT = "request_adjustment", "Request adjustment (awaiting approval)"
        APPROVE_ADJUSTMENT = "approve_adjustment", "Approve adjustment"
        LOGIN = "login", "Sign in to the admin"
        LOGIN_FAILED = "login_failed", "Failed sign-in to the admin"
        EXPORT_CSV = "export_csv", "Export CSV"
        EDIT_PAY_TABLES = "edit_pay_tables", "Edit pay tables"

    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                              related_name="operator_actions")
    actor_label = models.CharField(max_length=100)
    action = models.CharField(max_length=32, choices=Action.choices)
    target_model = models.CharField(max_length=64)
    target_pk = models.CharField(max_length=64)
    operator = models.ForeignKey(Operator, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    reason = models.TextField()
    payload = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["target_model", "target_pk"], name="operator_action_target")]
        constraints = [models.CheckConstraint(condition=~Q(reason=""), name="operator_action_reason_required")]

    def __str__(self):
        return f"{self.actor_label} {self.action} {self.target_model}:{self.target_pk}"


class RtpWatchFigure(models.Model):
    """The RTP watch's latest check (``settlement.rtp_watch.watch``) of one ``table``, ``bet_type``
    and ``window`` (``hour``, ``day``, ``shoe``): ``observed`` and ``expected`` RTP (fractions),
    ``se`` (its standard error; None with fewer than two rounds), ``z``, ``bets``, ``rounds``,
    ``flagged`` (an alert's worth), ``checked_at``. Replaced at every run; the dashboard shows them."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="+")
    bet_type = models.CharField(max_length=16)
    window = models.CharField(max_length=8)
    observed = models.FloatField()
    expected = models.FloatField()
    se = models.FloatField(null=True)
    z = models.FloatField(null=True)
    bets = models.PositiveIntegerField()
    rounds = models.PositiveIntegerField()
    flagged = models.BooleanField(default=False)
    checked_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["table", "bet_type", "window"], name="one_rtp_figure")]

    def __str__(self):
        return f"{self.table_id} {self.bet_type} {self.window}: {self.observed:.4f}"


class Adjustment(models.Model):
    """A signed adjustment of a player's ``wallet`` (``amount`` > 0 credits the player, < 0
    debits, in the currency's minor units) against ``house``, under ledger key ``key``, asked for
    by ``requested_by`` (None: the system): POSTED when it was within their limits, PENDING a
    second supervisor's approval (``approved_by``) above ``ADJUSTMENT_APPROVAL_THRESHOLD``
    (``settlement.adjustments``). ``dispute``: the dispute it settles, if any."""

    class Status(models.TextChoices):
        PENDING = "pending", "Awaiting a second supervisor"
        POSTED = "posted", "Posted"

    wallet = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="+")
    house = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="+")
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT, related_name="+")
    amount = models.DecimalField(**MONEY)
    key = models.CharField(max_length=200, unique=True)
    memo = models.TextField()
    dispute = models.ForeignKey(Dispute, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                     related_name="+")
    approved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="+")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    posted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["requested_by", "created_at"], name="adjustment_by_day"),
                   models.Index(fields=["wallet", "created_at"], name="adjustment_wallet_day")]

    def __str__(self):
        return f"adjustment {self.pk} of {self.amount} {self.currency_id} ({self.status})"


class RoundSeal(ImmutableModel):
    """The seal of a round's record at one of its final steps (``state`` SETTLED or VOIDED, on its
    ``correction``, 0 = the record received): a link of its table's chain of round records
    (``settlement.seals``). ``content`` says what the round was (table, variant, rules version,
    pay tables, shoe, times, the void's reason and actor) and holds the SHA-256 of its record,
    its corrections, its timeline up to ``content["timeline"]["last_event"]`` and its bets as
    they stood; ``sequence`` counts the table's seals from 1; ``prev_hash`` is the previous
    seal's ``chain_hash`` (None for the first), ``chain_hash`` the SHA-256 of ``prev_hash`` and the
    canonical ``content``. Never changed or deleted (a database trigger on PostgreSQL)."""

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="seals")
    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="seals")
    sequence = models.PositiveIntegerField()
    state = models.CharField(max_length=20)
    correction = models.PositiveIntegerField(default=0)
    content = models.JSONField()
    prev_hash = models.BinaryField(null=True, blank=True, editable=False)
    chain_hash = models.BinaryField(editable=False)
    sealed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "sequence"], name="one_seal_sequence_per_table"),
            models.UniqueConstraint(fields=["round", "state", "correction"], name="one_seal_per_round_step"),
        ]

    def __str__(self):
        return f"seal {self.sequence} of {self.table_id}: round {self.round_id} {self.state} ({self.correction})"


class SealChain(models.Model):
    """The head of a table's chain of round seals: the last seal's ``sequence`` and ``chain_hash``
    (``head``), locked by the one writer of the table's next seal."""

    table = models.OneToOneField(Table, on_delete=models.PROTECT, primary_key=True, related_name="seal_chain")
    sequence = models.PositiveIntegerField(default=0)
    head = models.BinaryField(null=True, blank=True, editable=False)

    def __str__(self):
        return f"seal chain of {self.table_id} ({self.sequence})"


class ExceptionEntry(models.Model):
    """One line of the exception report (``settlement.exception_report``): an operator action that
    changed money or the rules outside normal play, as it touched ONE operator: a void or the
    reversal of a settled round, a resettle, a manual adjustment, a dispute decision, a change of
    a table's pay tables. A round's void or resettle is one line per operator with bets in the
    round, with that operator's players' money only.

    ``action``: the audit row (who, when, why). ``operator``: whose staff see the line (None: the
    provider's, a table's pay tables). ``before`` / ``after``: the values the action changed (JSON,
    money as decimal strings), ``amount``: what it credited the operator's players in all, signed
    (``Decimal`` in ``currency``'s major units; None when it moved no money), ``transactions``: the
    ids of the ledger transactions it posted for them. Written by the action's service, in its
    transaction; never changed."""

    class Kind(models.TextChoices):
        VOID = "void", "Void"
        REVERSAL = "reversal", "Reversal of a settled round"
        RESETTLE = "resettle", "Resettle"
        ADJUSTMENT = "adjustment", "Manual adjustment"
        DISPUTE_DECISION = "dispute_decision", "Dispute decision"
        PAY_TABLES = "pay_tables", "Pay-table change"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    action = models.ForeignKey(OperatorAction, on_delete=models.PROTECT, related_name="exceptions")
    operator = models.ForeignKey(Operator, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    table = models.ForeignKey(Table, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    round = models.ForeignKey(Round, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    player = models.ForeignKey(Player, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    dispute = models.ForeignKey(Dispute, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    currency = models.ForeignKey(Currency, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    amount = models.DecimalField(null=True, blank=True, **MONEY)
    before = models.JSONField(default=dict)
    after = models.JSONField(default=dict)
    transactions = models.JSONField(default=list)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "exception"
        verbose_name_plural = "exception report"
        indexes = [models.Index(fields=["created_at", "id"], name="exception_created"),
                   models.Index(fields=["operator", "created_at"], name="exception_operator_created")]

    def __str__(self):
        return f"{self.get_kind_display()} ({self.action_id})"
