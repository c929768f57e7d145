"""The rollups as a full scan computes them, bet by bet in Python from the bets, their extra stakes,
their settlement details and the ledger, independently of ``wagering.rollups``' grouped queries;
and what the rollups keep, in the same shape, to compare the two."""

from collections import defaultdict
from decimal import Decimal

from django.utils import timezone

from accounts.models import Account, LedgerEntry, LedgerTransaction, Operator
from wagering.models import Bet, BetExtra, DailyAdjustment, DailyPlayer, DailyRollup, DailyRound

COLUMNS = ("bets", "turnover", "returned", "refunded_bets", "refunded", "rtp_staked", "rtp_returned")


def full_scan():
    """``(rollups, rounds, players, adjustments)``: ``{(day, operator, table, currency, bet type):
    {column: value}}`` without all-zero rows, sets of ``(day, operator, table, currency, round)``
    and ``(day, operator, table, currency, player)``, ``{(day, operator, currency): (count, sum)}``."""
    zones = dict(Operator.objects.values_list("pk", "time_zone"))
    extras = defaultdict(list)
    for bet_id, kind, amount in BetExtra.objects.values_list("bet_id", "kind", "amount"):
        extras[bet_id].append((kind, amount))
    rollups = defaultdict(lambda: dict.fromkeys(COLUMNS, 0))
    rounds, players = set(), set()
    for bet in Bet.objects.select_related("player", "settlement"):
        operator = bet.player.operator_id
        day = timezone.localtime(bet.placed_at, zones[operator]).date()
        players.add((day, operator, bet.table_id, bet.currency_id, bet.player_id))
        key = (day, operator, bet.table_id, bet.currency_id, bet.type)
        staked = bet.stake + sum((a for _, a in extras[bet.pk]), Decimal(0))
        row = rollups[key]
        if bet.state == Bet.State.SETTLED:
            insurance = bet.settlement.detail.get("insurance") or {}
            insured = sum((a for kind, a in extras[bet.pk] if kind == "insurance"), Decimal(0))
            assert insured == Decimal(insurance.get("stake", 0))
            row["bets"] += 1
            row["turnover"] += staked
            row["returned"] += bet.returned
            row["rtp_staked"] += bet.stake
            # the return on the original stake: every other extra stake's share and insurance out
            row["rtp_returned"] += bet.returned - (staked - bet.stake) + insured - Decimal(insurance.get("returned", 0))
            rounds.add((day, operator, bet.table_id, bet.currency_id, bet.round_id))
        elif bet.state == Bet.State.REFUNDED:
            row["refunded_bets"] += 1
            row["refunded"] += staked
    adjustments = defaultdict(lambda: (0, Decimal(0)))
    for entry in LedgerEntry.objects.filter(transaction__kind=LedgerTransaction.Kind.ADJUSTMENT,
                                            account__kind=Account.Kind.WALLET).select_related("account", "transaction"):
        day = timezone.localtime(entry.transaction.created_at, zones[entry.account.operator_id]).date()
        n, total = adjustments[(day, entry.account.operator_id, entry.account.currency_id)]
        adjustments[(day, entry.account.operator_id, entry.account.currency_id)] = (n + 1, total + entry.amount)
    return ({k: v for k, v in rollups.items() if any(v.values())}, rounds, players, dict(adjustments))


def kept():
    """What the rollups keep, in ``full_scan``'s shape."""
    rollups = {(r.day, r.operator_id, r.table_id, r.currency_id, r.bet_type): {c: getattr(r, c) for c in COLUMNS}
               for r in DailyRollup.objects.all()}
    rounds = set(DailyRound.objects.values_list("day", "operator_id", "table_id", "currency_id", "round_id"))
    players = set(DailyPlayer.objects.values_list("day", "operator_id", "table_id", "currency_id", "player_id"))
    adjustments = {(r.day, r.operator_id, r.currency_id): (r.adjustments, r.adjusted)
                   for r in DailyAdjustment.objects.all()}
    return ({k: v for k, v in rollups.items() if any(v.values())}, rounds, players, adjustments)
