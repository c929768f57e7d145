"""The movements of seamless players' money through their operators' wallets, and the journal of
every call made for them (docs/wallet-api.md).

A movement is written in the same database transaction as the ledger posting it stands for (or,
for a stake, before its debit is sent), so none is lost by a crash; the calls are the record of
what the platform asked and what the operator answered. Money is ``Decimal`` in the currency's
major units with its minor-unit decimals.
"""

from django.db import models
from django.db.models import Q

from accounts.models import MONEY, Currency, Operator, Player


class WalletMovement(models.Model):
    """One movement of a seamless player's money at its operator's wallet.

    - ``call``: ``debit`` (a stake, an extra stake, or a ``correction`` taking money back),
      ``credit`` (``payout``, ``refund``, ``resettle``, ``adjustment``: may be 0.00, which tells the
      operator a round is closed for the player), ``rollback`` (of ``reference``, a debit whose
      outcome is unknown or that the platform does not keep).
    - ``key``: unique; prefixed by the installation's ``WALLET_INSTALLATION_ID`` it is the call's
      ``transaction_id``, the same for every attempt. ``ledger_key``: the ledger transaction this
      movement stands for (None for a rollback, a zero credit, a stake not (yet) placed).
    - ``kind``: the protocol's kind; ``round_ref``, ``table_ref``, ``bets``: what it belongs to,
      for the operator's records.
    - ``claim``: what a stake debit holds for its bet while it is live (PENDING, or OK with neither
      its posting nor a rollback): the bet's position, ``<type>:<seat>`` (``<type>:`` on the shared
      hand), so that another bet of the player's on it is refused before its own debit is sent
      (``port.claims``); "" for any other movement.
    - ``state`` (``TRANSITIONS``): PENDING (to be sent or being sent) → OK (applied), REFUSED (the
      operator refused a debit: INSUFFICIENT_FUNDS, PLAYER_BLOCKED, LIMIT_EXCEEDED, ROLLED_BACK),
      UNKNOWN (a stake debit whose outcome is unknown: rejected, its rollback queued; never sent
      again), FAILED (an answer that must not be retried: DUPLICATE_TRANSACTION, or a correction
      refused for funds: for operators to resolve, ``retry`` by a supervisor).
    - The outbox (credits, rollbacks, corrections): ``attempts``, ``next_attempt_at`` (backoff 1 s
      doubling to 60 s), ``leased_until`` (set while a deliverer is sending it: no one else sends it
      before then), ``failing_since`` (the first failed attempt; an Alert after
      ``WALLET_ALERT_AFTER_SECONDS``), ``last_error``; delivered in ``id`` order per player.
    """

    class Call(models.TextChoices):
        DEBIT = "debit"
        CREDIT = "credit"
        ROLLBACK = "rollback"

    class State(models.TextChoices):
        PENDING = "pending"
        OK = "ok"
        REFUSED = "refused"
        UNKNOWN = "unknown"
        FAILED = "failed"

    TRANSITIONS = {
        State.PENDING: {State.OK, State.REFUSED, State.UNKNOWN, State.FAILED},
        State.FAILED: {State.PENDING},  # a supervisor's retry
        State.OK: set(), State.REFUSED: set(), State.UNKNOWN: set(),
    }
    #: Calls the outbox delivers (and retries); stake debits are sent once, synchronously.
    OUTBOX_KINDS = ("payout", "refund", "resettle", "adjustment", "correction")
    #: Every protocol kind (docs/wallet-api.md section 5): the debits', then the credits'.
    KINDS = ("stake", "double", "split", "insurance", "follow_double", "follow_split", "correction",
             "payout", "refund", "resettle", "adjustment")

    key = models.CharField(max_length=255, unique=True)
    ledger_key = models.CharField(max_length=128, null=True, blank=True, unique=True)
    call = models.CharField(max_length=8, choices=Call.choices)
    kind = models.CharField(max_length=16)
    # no index of its own: movement_outbox (Meta.indexes) leads with it
    operator = models.ForeignKey(Operator, on_delete=models.PROTECT, related_name="movements", db_index=False)
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="movements")
    currency = models.ForeignKey(Currency, on_delete=models.PROTECT, related_name="+")
    amount = models.DecimalField(**MONEY)
    reference = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="rollbacks")
    round_ref = models.CharField(max_length=64, blank=True)
    table_ref = models.CharField(max_length=32, blank=True)
    bets = models.JSONField(default=list, blank=True)
    claim = models.CharField(max_length=64, blank=True)
    state = models.CharField(max_length=8, choices=State.choices, default=State.PENDING)
    status = models.CharField(max_length=32, blank=True)  # the operator's last status (OK, INSUFFICIENT_FUNDS...)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    leased_until = models.DateTimeField(null=True, blank=True)
    failing_since = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["player", "id"], name="movement_player", condition=Q(state="pending")),
            models.Index(fields=["operator", "state", "next_attempt_at"], name="movement_outbox"),
            # the console's counts and the journal's lists of pending or failed movements, newest first
            models.Index(fields=["id"], name="movement_open", condition=Q(state__in=["pending", "failed"])),
            models.Index(fields=["round_ref"], name="movement_round"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gte=0), name="movement_amount_not_negative"),
            models.CheckConstraint(condition=~Q(call="rollback") | Q(reference__isnull=False),
                                   name="rollback_has_reference"),
        ]

    def __str__(self):
        return f"{self.call} {self.key} {self.state}"


class WalletCall(models.Model):
    """One attempt of a movement: the request sent (``request``, its ``request_id`` and
    ``sent_at``), what came back (``http_status``, ``answer``: the decoded JSON or the raw text,
    None without a response), the ``outcome`` the platform read from it (``ok``, ``refused``,
    ``failed``, ``unknown``), an ``error`` (a timeout, a connection error, a bad body) and its
    ``duration_ms``."""

    class Outcome(models.TextChoices):
        OK = "ok"
        REFUSED = "refused"
        FAILED = "failed"
        UNKNOWN = "unknown"

    movement = models.ForeignKey(WalletMovement, on_delete=models.PROTECT, related_name="calls")
    request_id = models.UUIDField()
    sent_at = models.DateTimeField()
    request = models.JSONField()
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    answer = models.JSONField(null=True, blank=True)
    outcome = models.CharField(max_length=8, choices=Outcome.choices)
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["movement", "id"], name="call_movement"),
            # the console's latest failures
            models.Index(fields=["id"], name="call_failure", condition=Q(outcome__in=["unknown", "failed"])),
        ]

    def __str__(self):
        return f"{self.movement_id} {self.outcome} {self.http_status}"
