"""Manual adjustments of a player's wallet, the one door through which operators move money by
hand (a dispute's adjustment and a wallet's manual adjustment both pass here).

Who may adjust how much is decided here, under locks, whatever page or script asks:

- the system (no user: the beat, a script) is not limited;
- a user without ``accounts.adjust_small`` or ``accounts.adjust_any`` makes none;
- a Dispute officer (``adjust_small`` only) names the dispute it settles (one of the wallet's
  player, in the wallet's currency) and stays within ``DISPUTE_OFFICER_ADJUSTMENT_LIMIT`` per
  adjustment, ``DISPUTE_OFFICER_DAILY_LIMIT`` over their own adjustments of the day and
  ``DISPUTE_OFFICER_PLAYER_DAILY_LIMIT`` over every operator's adjustments of that wallet that day
  (absolute values, in the currency's major units; the day is the last 24 hours). The officer's
  user row and the wallet are locked while the sums are read, so parallel requests queue;
- a supervisor (``adjust_any``) makes any amount; once their adjustments posted without a second
  supervisor over the last 24 hours would pass ``ADJUSTMENT_APPROVAL_THRESHOLD`` in the currency
  (so one above it, or many small ones that add up to it), the adjustment waits (PENDING) until a
  different supervisor approves it (``approve_adjustment``).

Amounts are parsed by ``accounts.money.parse_amount`` (decimal strings without exponent, at most the
currency's decimals) and stored quantised to the currency's minor unit.
"""

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Sum
from django.db.models.functions import Abs
from django.utils import timezone

from accounts.exceptions import IdempotencyConflict
from accounts.locks import lock_wallets
from accounts.money import amount_string, parse_amount
from wagering import rollups
from wallets.port import adjust

from . import audit, exception_report
from .exceptions import AdjustmentLimitExceeded, AdjustmentNeedsDispute, ApprovalRefused
from .models import Adjustment, ExceptionEntry, OperatorAction


def parse_adjustment(value, currency):
    """``value`` (a decimal string such as ``"-12.50"``, or a ``Decimal``) as a signed amount of
    ``currency`` (a ``Currency``). Raises ``InvalidAmount`` (zero, an exponent, too many decimals)."""
    return parse_amount(value, currency.minor_units, allow_negative=True)


def _is_officer(user):
    """True for a user limited as a Dispute officer; raises ``AdjustmentLimitExceeded`` for a user who
    may make no adjustment at all."""
    if user.has_perm("accounts.adjust_any"):
        return False
    if not user.has_perm("accounts.adjust_small"):
        raise AdjustmentLimitExceeded("you may not make adjustments")
    return True


def _adjusted_since(since, **filters):
    """The sum of the absolute amounts of the adjustments matching ``filters`` made since ``since``."""
    total = (Adjustment.objects.filter(created_at__gte=since, **filters)
             .aggregate(total=Sum(Abs("amount")))["total"])
    return total or 0


def _check_officer(user, wallet, amount, dispute):
    limit = settings.DISPUTE_OFFICER_ADJUSTMENT_LIMIT
    if abs(amount) > limit:
        raise AdjustmentLimitExceeded(f"adjustments above {limit} need a supervisor")
    if dispute is None or dispute.player_id != wallet.player_id or dispute.currency_id != wallet.currency_id:
        raise AdjustmentNeedsDispute("a Dispute officer's adjustment names the dispute it settles, one of "
                                     f"{wallet.player.code}'s in {wallet.currency_id}")
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()  # one officer's requests queue
    since = timezone.now() - timedelta(days=1)
    daily = settings.DISPUTE_OFFICER_DAILY_LIMIT
    if _adjusted_since(since, requested_by=user, currency=wallet.currency_id) + abs(amount) > daily:
        raise AdjustmentLimitExceeded(f"your adjustments of the last 24 hours would pass {daily} "
                                      f"{wallet.currency_id}: more needs a supervisor")
    per_player = settings.DISPUTE_OFFICER_PLAYER_DAILY_LIMIT
    if _adjusted_since(since, wallet=wallet) + abs(amount) > per_player:
        raise AdjustmentLimitExceeded(f"{wallet.player.code}'s adjustments of the last 24 hours would pass "
                                      f"{per_player} {wallet.currency_id}: more needs a supervisor")


def check_adjustment(user, wallet, amount, dispute=None):
    """Refuse an adjustment of ``amount`` (a signed ``Decimal``) of ``wallet`` by ``user`` (a user,
    or None for the system) settling ``dispute`` (or None), by the rules of the module; True when it
    must wait for a second supervisor. The caller holds ``wallet``'s lock. Raises
    ``AdjustmentLimitExceeded``, ``AdjustmentNeedsDispute``."""
    if not isinstance(user, AbstractBaseUser):
        return False
    if _is_officer(user):
        _check_officer(user, wallet, amount, dispute)
        return False
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()  # one supervisor's requests queue
    alone = _adjusted_since(timezone.now() - timedelta(days=1), requested_by=user, currency=wallet.currency_id,
                            status=Adjustment.Status.POSTED, approved_by__isnull=True)
    return alone + abs(amount) > settings.ADJUSTMENT_APPROVAL_THRESHOLD


def request_adjustment(*, wallet, house, amount, key, memo, actor, actor_user=None, dispute=None, audited=True):
    """In the caller's transaction: lock ``wallet``, check the adjustment (``check_adjustment``) and
    post ``amount`` (a parsed signed ``Decimal``) through the wallet port under ledger key ``key``
    (counted in the rollups: ``wagering.rollups.adjusted``), or leave it PENDING a second
    supervisor; audited (``manual_adjustment``, or ``request_adjustment`` when pending; a posted one
    not ``audited`` when the caller's own row says it, as a dispute's resolution does) unless
    ``key`` was asked for before (the same request again returns the first ``Adjustment``).
    Returns the ``Adjustment``. Raises what ``check_adjustment`` raises, ``IdempotencyConflict``
    (``key`` used for another amount or wallet), ``InsufficientFunds``."""
    label, user = audit.actor_fields(actor, actor_user)
    wallet = lock_wallets({wallet.player_id}, wallet.currency)[wallet.player_id]
    existing = Adjustment.objects.filter(key=key).first()
    if existing is not None:
        if (existing.wallet_id, existing.amount) != (wallet.pk, amount):
            before, now = (amount_string(a, wallet.currency.minor_units) for a in (existing.amount, amount))
            elsewhere = "" if existing.wallet_id == wallet.pk else " on another wallet"
            raise IdempotencyConflict(f"this adjustment was asked for before with {before}{elsewhere}, not {now}")
        return existing
    pending = check_adjustment(user, wallet, amount, dispute)
    adjustment = Adjustment.objects.create(
        wallet=wallet, house=house, currency_id=wallet.currency_id, amount=amount, key=key, memo=memo,
        dispute=dispute, requested_by=user, status=Adjustment.Status.PENDING if pending else Adjustment.Status.POSTED)
    txn = None
    if not pending:
        txn = adjust(wallet=wallet, house=house, amount=amount, key=key, memo=memo)
        adjustment.posted_at = timezone.now()
        adjustment.save(update_fields=["posted_at"])
        rollups.adjusted(wallet=wallet, amount=amount, at=adjustment.posted_at)
    action = OperatorAction.Action.REQUEST_ADJUSTMENT if pending else OperatorAction.Action.MANUAL_ADJUSTMENT
    if audited or pending:
        row = audit.record(actor=label, actor_user=user, action=action, target=wallet, operator_id=wallet.operator_id,
                           reason=memo, key=key, amount=str(amount), adjustment=adjustment.pk,
                           dispute=dispute.pk if dispute else None)
        if txn is not None:
            exception_report.record_wallet(action=row, kind=ExceptionEntry.Kind.ADJUSTMENT, wallet=wallet,
                                           transaction=txn, dispute=dispute)
    return adjustment


@transaction.atomic(durable=True)
def approve_adjustment(*, adjustment, actor, reason):
    """Post a PENDING ``adjustment`` (an ``Adjustment`` or pk) on the approval of ``actor``, a
    supervisor other than the one who asked for it, with ``reason``; audited and counted in the
    rollups on the day it is posted. Approving a posted one again changes nothing. Returns
    ``(Adjustment, posted)``: ``posted`` is False when it was POSTED already (read under the
    adjustment's row lock: of parallel approvals one only is True). Raises ``ApprovalRefused``,
    ``ReasonRequired``, ``InsufficientFunds``."""
    reason = audit.require_reason(reason)
    pk = adjustment.pk if isinstance(adjustment, Adjustment) else adjustment
    adjustment = Adjustment.objects.select_for_update().select_related("wallet").get(pk=pk)
    if adjustment.status == Adjustment.Status.POSTED:
        return adjustment, False
    if not actor.has_perm("accounts.adjust_any"):
        raise ApprovalRefused("only a supervisor approves an adjustment")
    if actor.pk == adjustment.requested_by_id:
        raise ApprovalRefused("a second supervisor approves an adjustment, not the one who asked for it")
    wallet = lock_wallets({adjustment.wallet.player_id}, adjustment.currency)[adjustment.wallet.player_id]
    txn = adjust(wallet=wallet, house=adjustment.house, amount=adjustment.amount, key=adjustment.key,
                 memo=adjustment.memo)
    adjustment.status, adjustment.approved_by, adjustment.posted_at = (Adjustment.Status.POSTED, actor,
                                                                       timezone.now())
    adjustment.save(update_fields=["status", "approved_by", "posted_at"])
    rollups.adjusted(wallet=wallet, amount=adjustment.amount, at=adjustment.posted_at)
    row = audit.record(actor=actor, action=OperatorAction.Action.APPROVE_ADJUSTMENT, target=wallet,
                       operator_id=wallet.operator_id, reason=reason, key=adjustment.key,
                       amount=str(adjustment.amount), adjustment=adjustment.pk)
    exception_report.record_wallet(action=row, kind=ExceptionEntry.Kind.ADJUSTMENT, wallet=wallet, transaction=txn,
                                   dispute=adjustment.dispute)
    return adjustment, True
