"""Disputes (a player contests some of their bets) and manual adjustments by operators.

Status: OPEN → INVESTIGATING (assigned) → UPHELD (optionally with a signed adjustment posted to the
player's wallet as ``adjust:dispute:<pk>``) or REJECTED. Operator services take ``actor`` (a user or
a label, ``settlement.audit``) and write an ``OperatorAction``. Who may open a page or press a
button is the admin's business; who may adjust how much is ``settlement.adjustments``'s, through
which every adjustment passes. Money is ``Decimal`` (or a decimal string) in the currency's major
units, never float.
"""

from django.db import transaction

from accounts.locks import lock_player
from accounts.models import LedgerTransaction
from accounts.money import parse_amount
from accounts.services import house_account, wallet_for
from tables.exceptions import InvalidInput
from wagering.models import Bet

from . import audit, exception_report
from .adjustments import parse_adjustment, request_adjustment
from .exceptions import (
    AdjustmentNotAllowed,
    AlreadyDisputed,
    MixedCurrencies,
    NoBets,
    NotOwnBets,
)
from .locks import lock_dispute
from .models import Dispute, DisputeNote, ExceptionEntry, OperatorAction

#: A dispute not yet decided: its bets cannot be disputed again until it is.
PENDING = (Dispute.Status.OPEN, Dispute.Status.INVESTIGATING)

#: House account that manual adjustments are posted against (one per currency).
ADJUSTMENTS_ACCOUNT = "adjustments"


@transaction.atomic(durable=True)
def open_dispute(*, player, bets, reason):
    """Open a dispute of ``player`` (a ``Player``) about ``bets`` (``Bet`` instances or pks, all the
    player's own, all in one currency, none in a dispute still open or under investigation) with
    ``reason`` (non-blank). Returns the ``Dispute``. Raises ``NoBets``, ``NotOwnBets``,
    ``MixedCurrencies``, ``AlreadyDisputed``, ``ReasonRequired``."""
    reason = audit.require_reason(reason)
    pks = {b.pk if isinstance(b, Bet) else int(b) for b in bets}
    if not pks:
        raise NoBets("a dispute names at least one bet")
    found = list(Bet.objects.filter(pk__in=pks).values_list("pk", "player_id", "round__table__currency_id"))
    if len(found) != len(pks) or any(player_id != player.pk for _, player_id, _ in found):
        raise NotOwnBets("a player may only dispute their own bets")
    currencies = {currency for _, _, currency in found}
    if len(currencies) != 1:
        raise MixedCurrencies(f"the bets are in several currencies: {sorted(currencies)}")
    lock_player(player.pk)  # one dispute at a time per player
    pending = (Dispute.bets.through.objects.filter(bet_id__in=pks, dispute__status__in=PENDING)
               .order_by("bet_id").values_list("bet_id", "dispute_id").first())
    if pending:
        raise AlreadyDisputed(f"bet {pending[0]} is already in dispute {pending[1]}, not yet decided")
    dispute = Dispute.objects.create(player=player, reason=reason, currency_id=currencies.pop())
    dispute.bets.set(pks)
    return dispute


@transaction.atomic(durable=True)
def assign_dispute(*, dispute, assignee, actor, actor_user=None):
    """Give ``dispute`` (a ``Dispute`` or pk) to ``assignee`` (a user); an OPEN dispute becomes
    INVESTIGATING. Returns the ``Dispute``. Raises ``IllegalTransition`` on a resolved one."""
    return _assign_locked(lock_dispute(dispute), assignee, actor, actor_user)


def _assign_locked(dispute, assignee, actor, actor_user):
    if dispute.status == Dispute.Status.OPEN:
        dispute.transition(Dispute.Status.INVESTIGATING)
    elif dispute.status != Dispute.Status.INVESTIGATING:
        dispute.transition(Dispute.Status.INVESTIGATING)  # raises: resolved disputes are not reassigned
    dispute.assignee = assignee
    dispute.save(update_fields=["status", "assignee", "updated_at"])
    audit.record(actor=actor, actor_user=actor_user, action=OperatorAction.Action.ASSIGN_DISPUTE, target=dispute,
                 operator_id=dispute.player.operator_id, reason=f"assigned to {assignee.get_username()}",
                 assignee=assignee.pk)
    return dispute


def add_note(*, dispute, author, text):
    """Append a note by ``author`` (a user) to ``dispute``; returns the ``DisputeNote``.
    Raises ``ReasonRequired`` for a blank text."""
    return DisputeNote.objects.create(dispute_id=dispute.pk if isinstance(dispute, Dispute) else dispute,
                                      author=author, text=audit.require_reason(text))


@transaction.atomic(durable=True)
def resolve_dispute(*, dispute, upheld, resolution, adjustment=None, actor, actor_user=None):
    """Decide an INVESTIGATING ``dispute``: ``upheld`` True → UPHELD, and a non-zero ``adjustment``
    (signed ``Decimal``/string in the dispute currency: > 0 credits the player, < 0 debits) is posted
    through the wallet port (``wallets.port.adjust``) as ``adjust:dispute:<pk>`` against the house
    account of the first disputed bet's table, by the rules of ``settlement.adjustments`` (a
    supervisor's above the approval threshold waits for a second supervisor); False → REJECTED (no
    adjustment allowed). ``resolution`` is the reason (non-blank). Submitting the same decision
    again returns the dispute unchanged (nothing posted twice). Writes an ``OperatorAction``.
    Returns the ``Dispute``. Raises ``ReasonRequired``, ``IllegalTransition`` (an OPEN dispute: see
    ``decide_dispute``), ``AdjustmentNotAllowed``, ``AdjustmentLimitExceeded``,
    ``AdjustmentNeedsDispute``, ``InvalidAmount``, ``InsufficientFunds`` (a debit the wallet cannot
    cover). The reason is shown to the player (the player API's disputes); the decision is a line
    of the exception report."""
    return _resolve_locked(lock_dispute(dispute), upheld, resolution, adjustment, actor, actor_user)[0]


@transaction.atomic(durable=True)
def decide_dispute(*, dispute, upheld, resolution, adjustment=None, actor):
    """An operator's decision from the dispute's page: ``resolve_dispute`` by ``actor`` (a user),
    an OPEN dispute first assigned to them (INVESTIGATING, audited) in the same transaction, so a
    refusal leaves it unassigned. Same arguments and errors as ``resolve_dispute``. Returns
    ``(Dispute, decided)``: ``decided`` is False when the dispute was decided so already (read
    under the dispute's lock: of parallel identical decisions one only is True)."""
    dispute = lock_dispute(dispute)
    if dispute.status == Dispute.Status.OPEN:
        _assign_locked(dispute, actor, actor, None)
    return _resolve_locked(dispute, upheld, resolution, adjustment, actor, None)


def _adjustment_of(dispute, upheld, adjustment):
    """The adjustment of a decision, parsed (a non-zero ``Decimal``), or None. Raises
    ``InvalidAmount``, ``AdjustmentNotAllowed`` (an adjustment on a rejection)."""
    amount = None
    if adjustment is not None:
        amount = parse_amount(adjustment, dispute.currency.minor_units, allow_zero=True, allow_negative=True) or None
        if amount and not upheld:
            raise AdjustmentNotAllowed(f"a rejected dispute takes no adjustment ({amount} was given): uphold it "
                                       "to adjust the wallet, or leave the amount out")
    return amount


def _resolve_locked(dispute, upheld, resolution, adjustment, actor, actor_user):
    """``resolve_dispute`` of the locked ``dispute``: ``(Dispute, decided)``, ``decided`` False for
    the same decision again (nothing changed)."""
    resolution = audit.require_reason(resolution)
    status = Dispute.Status.UPHELD if upheld else Dispute.Status.REJECTED
    label, user = audit.actor_fields(actor, actor_user)
    amount = _adjustment_of(dispute, upheld, adjustment)
    if dispute.status == status and dispute.adjustment == amount:
        return dispute, False
    if dispute.status in (Dispute.Status.UPHELD, Dispute.Status.REJECTED):
        raise AdjustmentNotAllowed(f"dispute {dispute.pk} was already decided {dispute.status}")
    status_before = dispute.status
    dispute.transition(status)
    dispute.resolution, dispute.adjustment = resolution, amount
    dispute.resolved_by = user
    dispute.save(update_fields=["status", "resolution", "adjustment", "resolved_at", "resolved_by", "updated_at"])
    wallet, txn = wallet_for(player=dispute.player, currency=dispute.currency_id), None
    if amount:
        table = dispute.bets.order_by("pk").select_related("round__table").first().round.table
        request_adjustment(wallet=wallet,
                           house=house_account(name=table.house_name, currency=dispute.currency_id,
                                               operator=dispute.player.operator_id),
                           amount=amount, key=dispute.adjustment_key, memo=f"dispute {dispute.pk}: {resolution}",
                           actor=label, actor_user=user, dispute=dispute, audited=False)
        txn = LedgerTransaction.objects.filter(key=dispute.adjustment_key).first()  # None: awaiting approval
    action = audit.record(actor=label, actor_user=user, action=OperatorAction.Action.RESOLVE_DISPUTE, target=dispute,
                          operator_id=dispute.player.operator_id, reason=resolution, upheld=upheld,
                          adjustment=None if amount is None else str(amount))
    exception_report.record_wallet(action=action, kind=ExceptionEntry.Kind.DISPUTE_DECISION, wallet=wallet,
                                   transaction=txn, dispute=dispute, before={"status": status_before},
                                   after={"status": status, "adjustment": None if amount is None else str(amount)})
    return dispute, True


#: The longest key of a manual adjustment (its ledger key ``adjust:manual:<key>`` fits the ledger's).
KEY_LENGTH = 64


@transaction.atomic(durable=True)
def manual_adjustment(*, player, currency, amount, reason, actor, key, actor_user=None, dispute=None):
    """Credit (``amount`` > 0) or debit (< 0) ``player``'s wallet in ``currency`` (a ``Currency`` or
    code) against the house account ``adjustments``, under ledger key ``adjust:manual:<key>``
    (``key``: the caller's idempotency key; the same key again posts nothing and writes no second
    audit row), by the rules of ``settlement.adjustments`` (``dispute``: the ``Dispute`` or pk it
    settles, which a Dispute officer must name). Returns the ``Adjustment`` (POSTED, or PENDING a
    second supervisor). Raises ``InvalidInput`` (a ``key`` that is not 1 to ``KEY_LENGTH``
    characters), ``ReasonRequired``, ``InvalidAmount``, ``AdjustmentLimitExceeded``,
    ``AdjustmentNeedsDispute``, ``InsufficientFunds``, ``IdempotencyConflict``."""
    if not isinstance(key, str) or not 0 < len(key) <= KEY_LENGTH:
        raise InvalidInput(f"key: an adjustment's key is 1 to {KEY_LENGTH} characters")
    reason = audit.require_reason(reason)
    wallet = wallet_for(player=player, currency=currency)
    value = parse_adjustment(amount, wallet.currency)
    if dispute is not None and not isinstance(dispute, Dispute):
        dispute = Dispute.objects.filter(pk=dispute).first()
    return request_adjustment(
        wallet=wallet, house=house_account(name=ADJUSTMENTS_ACCOUNT, currency=wallet.currency_id,
                                           operator=wallet.operator_id),
        amount=value, key=f"adjust:manual:{key}", memo=reason, actor=actor, actor_user=actor_user, dispute=dispute)
