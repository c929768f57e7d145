"""The seamless half of reconciliation (docs/wallet-api.md): every ledger posting on a seamless
player's journal wallet has its wallet movement, acknowledged or pending, of the same amount and
direction; no movement stands for a posting that does not exist; and no stake debit the operator
applied is left without its bet or its rollback."""

from datetime import timedelta

from django.conf import settings
from django.db.models import F, OuterRef, Q, Subquery
from django.utils import timezone

from accounts.models import LedgerEntry, LedgerTransaction
from accounts.reconcile import reconcile as reconcile_ledger

from .models import WalletMovement


def reconcile(limit=20):
    """``accounts.reconcile.reconcile`` (the ledger's invariants) with the seamless wallets'
    (``reconcile_movements``) among its breaches: the platform's one reconcile."""
    report = reconcile_ledger(limit)
    report.breaches += reconcile_movements(limit)
    return report


def reconcile_movements(limit=20):
    """Sentences, one per breach (at most ``limit`` of each kind); empty when clean. Reads only."""
    breaches = []
    standing = WalletMovement.objects.exclude(ledger_key=None)
    orphans = (LedgerTransaction.objects.filter(entries__account__journal=True)
               .exclude(key__in=standing.values("ledger_key")).values_list("key", flat=True).distinct()[:limit])
    breaches += [f"ledger transaction {key} of a seamless wallet has no wallet movement" for key in orphans]
    missing = standing.exclude(ledger_key__in=LedgerTransaction.objects.values("key")).values_list("key", flat=True)
    breaches += [f"wallet movement {key} stands for a ledger transaction that does not exist"
                 for key in missing[:limit]]
    entry = LedgerEntry.objects.filter(transaction__key=OuterRef("ledger_key"), account__journal=True,
                                       account__player=OuterRef("player")).values("amount")[:1]
    signed = standing.annotate(entry=Subquery(entry))
    credit = Q(call=WalletMovement.Call.CREDIT)
    wrong = signed.filter(credit & ~Q(entry=F("amount")) | ~credit & ~Q(entry=-F("amount")))
    breaches += [f"wallet movement {key} moves {amount}, its ledger transaction {entry}"
                 for key, amount, entry in wrong.values_list("key", "amount", "entry")[:limit]]
    stale = timezone.now() - timedelta(seconds=2 * settings.WALLET_STAKE_RECOVERY_SECONDS)
    applied = (WalletMovement.objects.filter(call=WalletMovement.Call.DEBIT, state=WalletMovement.State.OK,
                                             ledger_key=None, created_at__lte=stale, rollbacks__isnull=True)
               .exclude(kind="correction").values_list("key", flat=True)[:limit])
    breaches += [f"stake debit {key} was applied by the operator without a bet and without a rollback"
                 for key in applied]
    return breaches
