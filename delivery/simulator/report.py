"""The end-of-run report: per variant rounds, bets, staked, returned and observed RTP with its 95%
confidence interval beside the theoretical figure; voids, refunds, faults, seat refusals,
decisions; what crossed the seamless operators' wallets; the ledger and the seamless wallets checked
(``wallets.reconcile``) and the house result against the bets."""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache

from django.db.models import Count, Sum

from accounts.models import Account, LedgerEntry
from tables.engine.rtp import side_bet_distribution, side_bet_rtp
from tables.models import Round
from wagering.models import Bet, BetExtra
from wallets.reconcile import reconcile
from wallets.selectors import movement_summary

from .calls import RETRIES

MAIN_GAME = ("main", "behind")  # a bet behind plays the seat's hand: main-game RTP (insurance included)
Z95 = 1.96


@dataclass
class RtpLine:
    """Observed RTP of one (variant, bet group): ``rounds`` (with such bets), ``bets``, ``staked``
    and ``returned`` (Decimal, pooled over currencies: the demo tables share their limits),
    ``rtp`` and ``low``/``high`` (95% confidence interval, fractions), ``theory`` (fraction)."""

    variant: str
    group: str
    rounds: int
    bets: int
    staked: Decimal
    returned: Decimal
    rtp: float
    low: float
    high: float
    theory: float


@dataclass
class Report:
    """Everything the report prints (see ``format_report``)."""

    rtp: list
    money: list                 # (variant, currency, rounds settled, rounds voided, bets, staked, returned, refunded)
    house_vs_players: dict      # currency -> (house result from the ledger, players' result from the bets)
    reconcile: object
    states: dict = field(default_factory=dict)
    wallet: list = field(default_factory=list)  # (operator, call, kind, state, movements, amount)
    wallet_calls: int = 0


@cache
def theory(variant: str, group: str, rules) -> float:
    """The theoretical RTP: the published maximum for the main game (RULES table), the exact
    side-bet RTP of the table's pay table (``tables.engine.rtp``)."""
    if group == "main game":
        return float(rules.max_rtp) / 100
    return float(side_bet_rtp(side_bet_distribution(group, variant), rules.pay_tables[group]))


def ratio_ci(pairs) -> tuple[float, float, float]:
    """Ratio estimate ΣY/ΣX and its 95% interval from per-round (staked X, returned Y) pairs
    (the delta method: rounds are independent, bets within a round are not). The interval is a
    normal approximation, cut at 0 (no bet returns less than nothing); with few winning rounds of a
    rare side bet it is far too narrow or wide: the report says so."""
    n = len(pairs)
    sx = sum(x for x, _ in pairs)
    r = float(sum(y for _, y in pairs) / sx)
    if n < 2:
        return r, float("nan"), float("nan")
    mean_x = float(sx) / n
    var = sum((float(y) - r * float(x)) ** 2 for x, y in pairs) / (n - 1) / n / mean_x ** 2
    half = Z95 * math.sqrt(var)
    return r, max(0.0, r - half), r + half


def build_report(round_ids, tables) -> Report:
    """Aggregate the settled bets of ``round_ids`` (the run's rounds; ``tables``: ``{code: Table}``)."""
    rounds = {pk: (code, state) for pk, code, state in
              Round.objects.filter(pk__in=round_ids).values_list("pk", "table__code", "state")}
    extras = defaultdict(Decimal)
    for bet_id, amount in BetExtra.objects.filter(bet__round__in=round_ids).values("bet_id") \
            .annotate(total=Sum("amount")).values_list("bet_id", "total"):
        extras[bet_id] = amount
    per_round = defaultdict(lambda: [Decimal(0), Decimal(0), 0])   # (variant, group, round) -> staked, returned, n
    money = defaultdict(lambda: [set(), set(), 0, Decimal(0), Decimal(0), Decimal(0)])
    for pk, rid, type_, state, stake, returned in Bet.objects.filter(round__in=round_ids).values_list(
            "pk", "round_id", "type", "state", "stake", "returned").iterator(chunk_size=20000):
        table = tables[rounds[rid][0]]
        staked = stake + extras[pk]
        row = money[(table.variant, table.currency_id)]
        row[2] += 1
        if state == Bet.State.REFUNDED:
            row[5] += staked
            continue
        if state != Bet.State.SETTLED:
            continue
        row[3] += staked
        row[4] += returned
        cell = per_round[(table.variant, "main game" if type_ in MAIN_GAME else type_, rid)]
        cell[0] += staked
        cell[1] += returned
        cell[2] += 1
    for pk, (code, state) in rounds.items():
        table = tables[code]
        row = money[(table.variant, table.currency_id)]
        if state == Round.State.SETTLED:
            row[0].add(pk)
        elif state == Round.State.VOIDED:
            row[1].add(pk)
    grouped = defaultdict(list)
    for (variant, group, _), (x, y, n) in per_round.items():
        grouped[(variant, group)].append((x, y, n))
    rules_of = {t.variant: t.rules() for t in tables.values()}
    lines = []
    for (variant, group), cells in sorted(grouped.items(),
                                          key=lambda kv: (kv[0][0], kv[0][1] != "main game", kv[0][1])):
        pairs = [(x, y) for x, y, _ in cells if x]
        if not pairs:
            continue
        r, low, high = ratio_ci(pairs)
        lines.append(RtpLine(variant, group, len(pairs), sum(n for _, _, n in cells), sum(x for x, _ in pairs),
                             sum(y for _, y in pairs), r, low, high, theory(variant, group, rules_of[variant])))
    money_rows = [(v, c, len(r[0]), len(r[1]), r[2], r[3], r[4], r[5]) for (v, c), r in sorted(money.items())]
    wallet, wallet_calls = movement_summary([str(pk) for pk in round_ids])
    return Report(lines, money_rows, house_vs_players({t.currency_id for t in tables.values()}), reconcile(),
                  dict(Round.objects.filter(pk__in=round_ids).values("state").annotate(n=Count("id"))
                       .values_list("state", "n")), wallet, wallet_calls)


def house_vs_players(currencies) -> dict:
    """Per currency, over the whole ledger: the house accounts' result (sum of their entries) and
    the players' result from the bets (returns of settled bets minus everything they staked;
    refunded bets count zero). With every bet settled or refunded and no manual adjustment, the
    house result is exactly minus the players' result."""
    out = {}
    for currency in sorted(currencies):
        house = LedgerEntry.objects.filter(account__kind=Account.Kind.HOUSE, account__currency_id=currency) \
            .aggregate(s=Sum("amount"))["s"] or Decimal(0)
        settled = Bet.objects.filter(round__table__currency_id=currency, state=Bet.State.SETTLED)
        returned = settled.aggregate(s=Sum("returned"))["s"] or Decimal(0)
        stakes = settled.aggregate(s=Sum("stake"))["s"] or Decimal(0)
        extra = BetExtra.objects.filter(bet__round__table__currency_id=currency, bet__state=Bet.State.SETTLED) \
            .aggregate(s=Sum("amount"))["s"] or Decimal(0)
        out[currency] = (house, returned - stakes - extra)
    return out


def _pct(x: float) -> str:
    return "   n/a" if math.isnan(x) else f"{100 * x:6.2f}%"


def format_report(report: Report, result) -> str:
    """The report as text (``result``: the run's ``SimulationResult``)."""
    stats, out = result.stats, []
    add = out.append
    add(f"Simulated {len(stats.rounds):,} rounds at {len(result.tables)} tables in {result.seconds:.1f} s "
        f"(+{result.settle_seconds:.1f} s waiting for settlement); round states: "
        + ", ".join(f"{k} {v}" for k, v in sorted(report.states.items())))
    add("\nMoney per variant and currency (staked includes doubles, splits, insurance):")
    add(f"  {'variant':<10}{'cur':<5}{'settled':>8}{'voided':>7}{'bets':>9}{'staked':>15}{'returned':>15}"
        f"{'refunded':>12}")
    for v, c, settled, voided, bets, staked, returned, refunded in report.money:
        add(f"  {v:<10}{c:<5}{settled:>8}{voided:>7}{bets:>9,}{staked:>15,.2f}{returned:>15,.2f}{refunded:>12,.2f}")
    add("\nObserved RTP (95% confidence interval from the per-round return variance) vs theory")
    add("  (main game = main bets, bets behind and insurance; theory = the published maximum with perfect")
    add("  basic strategy; the simulated players deviate and time out, so the main game runs a little lower;")
    add("  side bets: the exact RTP of the table's pay table; a side bet paid in few rounds has an")
    add("  unreliable interval (a normal approximation): hundreds of rounds say little about it):")
    add(f"  {'variant':<10}{'bet':<12}{'rounds':>7}{'bets':>9}{'staked':>14}{'returned':>14}"
        f"{'RTP':>9}  {'95% CI':<19}{'theory':>8}")
    for ln in report.rtp:
        add(f"  {ln.variant:<10}{ln.group:<12}{ln.rounds:>7}{ln.bets:>9,}{ln.staked:>14,.2f}{ln.returned:>14,.2f}"
            f"{_pct(ln.rtp):>9}  [{_pct(ln.low)}, {_pct(ln.high)}]{_pct(ln.theory):>9}")
    add("\nFaults: " + (", ".join(f"{k} {len(v)}" for k, v in sorted(stats.faults.items())) or "none")
        + f"; misread rounds resettled: {result.resettled}")
    by_kind = defaultdict(int)
    for _, _, kind, _ in stats.refusals:
        by_kind[kind] += 1
    add(f"Seats refused (RULES 9): {len(stats.refusals)} (" + ", ".join(f"{k} {n}" for k, n in sorted(by_kind.items()))
        + ")" + (f", e.g. {stats.refusals[0][1]} at {stats.refusals[0][0]}: {stats.refusals[0][3]}; "
                 "they bet behind instead" if stats.refusals else ""))
    add("Calls retried after a database error (a deadlock, a lock timeout, a lost connection): "
        + (", ".join(f"{k} {n}" for k, n in sorted(RETRIES.items())) or "none"))
    add("Bets rejected by the platform: "
        + (", ".join(f"{k} {n}" for k, n in sorted(stats.rejected.items())) or "none"))
    d = stats.decisions
    add("Extra stakes taken: " + ", ".join(f"{k} {n}" for k, n in sorted(d.extras.items()))
        + "; not covered (RULES 4 fallback / not bought): "
        + (", ".join(f"{k} {n}" for k, n in sorted(d.fallbacks.items())) or "none")
        + f"; timeouts (auto-play): {d.timeouts}")
    if report.wallet:
        add(f"\nAcross the seamless operators' wallets ({report.wallet_calls:,} calls, retries included; "
            "amounts summed over currencies):")
        add(f"  {'operator':<10}{'call':<10}{'kind':<14}{'state':<10}{'movements':>10}{'amount':>15}")
        for code, call, kind, state, n, amount in report.wallet:
            add(f"  {code:<10}{call:<10}{kind:<14}{state:<10}{n:>10,}{amount:>15,.2f}")
        if not result.delivered:
            add(f"  NOT DELIVERED: movements still pending after {result.config.wallet_timeout:.0f} s")
    add("\nHouse result (ledger) vs players' result (bets), per currency:")
    for currency, (house, players) in report.house_vs_players.items():
        check = "ok: house = -players" if house == -players else "DIFFERS"
        add(f"  {currency}: house {house:,.2f}  players {players:,.2f}  ({check})")
    rec = report.reconcile
    add(f"\nreconcile: {'clean' if rec.ok else 'BREACHES'} ({rec.transactions:,} transactions, "
        f"{rec.entries:,} entries, {rec.wallets:,} wallets)")
    out += [f"  BREACH: {b}" for b in rec.breaches]
    return "\n".join(out)
