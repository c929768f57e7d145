"""The RTP watch: observed RTP per table, bet type and rolling window against the exact
theoretical figure (``tables.rtp``), with an ``Alert`` (kind ``rtp_deviation``) when they differ by
more than ``settings.RTP_WATCH_Z`` standard errors. Run by the beat job ``settlement.rtp_watch``.

Windows (``WINDOWS``): rounds SETTLED in the last hour, in the last 24 hours, and the rounds of the
table's current shoe (its latest ``Shoe``). Only SETTLED bets of SETTLED rounds count; a voided
round's bets are refunded and drop out.

Observed RTP. For bet ``i``: ``s_i`` its original stake, ``y_i`` what it returned for that stake:
``returned - staked + stake`` with ``staked`` every stake it held (doubles, splits, follows), and
insurance taken out (its stake and return), because the theoretical main-game figure is per unit
of ORIGINAL stake with insurance never taken. ``RTP = sum(y) / sum(s)`` (a fraction: 0.9952).

Standard error: a ratio estimator whose sampling unit is the ROUND, not the bet: the bets of one
round share the dealer's cards (in boundless, every main bet shares the whole hand), so they are
not independent. With per-round sums ``S_r = sum(s_i)``, ``Y_r = sum(y_i)`` over ``m`` rounds, the
delta method gives ``Var(RTP) = m / (m - 1) * sum((Y_r - RTP * S_r) ** 2) / (sum S_r) ** 2``
(the cluster-robust form; with one bet per round it is the per-bet formula). Rounds of one shoe
are treated as independent (their card dependence is weak). ``z = (observed - expected) / se``.

Alerts are idempotent: at most one OPEN (unacknowledged) alert per table, bet type and window;
a later run that still finds a deviation updates its payload and message (the latest figures)
instead of adding another; a run that finds none leaves it for operators to acknowledge.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import Count, DecimalField, F, Q, Sum, Value
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone

from tables import rtp
from tables.locks import lock_table
from tables.models import Round, Shoe, Table
from wagering.models import Bet

from .models import Alert, RtpWatchFigure

#: window name -> how far back a round's settlement may be (None: the table's current shoe)
WINDOWS = {"hour": timedelta(hours=1), "day": timedelta(days=1), "shoe": None}

_NUM = DecimalField(max_digits=20, decimal_places=4)


def _num(*path: str):
    """A decimal string at ``path`` of the bet's settlement detail, as a number (0 when missing)."""
    node = "settlement__detail"
    for key in path[:-1]:
        node = KeyTransform(key, node)
    return Coalesce(Cast(KeyTextTransform(path[-1], node), _NUM), Value(Decimal(0)), output_field=_NUM)


#: y_i of the module docstring: the return on the original stake, extras and insurance taken out
RETURN_ON_STAKE = (F("returned") - _num("staked") + F("stake")
                   + _num("insurance", "stake") - _num("insurance", "returned"))


@dataclass(frozen=True)
class WindowStats:
    """Observed RTP of one bet type over one window.

    bets, rounds: counts; staked: sum of original stakes (``Decimal``, major units);
    returned: sum of returns on them (``Decimal``); rtp: ``returned / staked`` (fraction);
    se: its standard error (fraction; ``nan`` with fewer than two rounds).
    """

    bets: int
    rounds: int
    staked: Decimal
    returned: Decimal
    rtp: float
    se: float

    def z(self, expected: float) -> float:
        """``(rtp - expected) / se``; ``inf`` (signed) when ``se`` is 0 and they differ, 0 when equal."""
        diff = self.rtp - expected
        if self.se > 0:
            return diff / self.se
        return 0.0 if diff == 0 else math.copysign(math.inf, diff)


def ratio_stats(rounds) -> WindowStats | None:
    """``WindowStats`` of per-round sums ``rounds``: iterable of ``(bets, staked, returned)``
    (``int``, ``Decimal``, ``Decimal``; one tuple per round); None when nothing was staked."""
    rows = list(rounds)
    staked = sum((s for _, s, _ in rows), Decimal(0))
    if not rows or staked <= 0:
        return None
    returned = sum((y for _, _, y in rows), Decimal(0))
    ratio = returned / staked
    m = len(rows)
    se = math.nan
    if m > 1:
        resid = sum(float(y - ratio * s) ** 2 for _, s, y in rows)
        se = math.sqrt(m / (m - 1) * resid) / float(staked)
    return WindowStats(sum(n for n, _, _ in rows), m, staked, returned, float(ratio), se)


def observed(table: Table, now=None) -> dict:
    """Observed RTP of ``table`` at ``now`` (default: now): ``{(bet_type, window): WindowStats}``
    for every bet type with settled bets in each window of ``WINDOWS``. One query, grouped by
    bet type and round."""
    now = now or timezone.now()
    since = {w: now - span for w, span in WINDOWS.items() if span is not None}
    shoe = Shoe.objects.filter(table=table).order_by("-sequence").values_list("pk", flat=True).first()
    in_window = Q(round__settled_at__gte=min(since.values())) | Q(round__shoe_id=shoe)
    per_round = (Bet.objects.filter(in_window, round__table=table, round__state=Round.State.SETTLED,
                                    state=Bet.State.SETTLED)
                 .values("type", "round_id", "round__settled_at", "round__shoe_id")
                 .annotate(n=Count("id"), staked=Sum("stake"), back=Sum(RETURN_ON_STAKE)))
    grouped: dict = {}
    for row in per_round:
        for window in WINDOWS:
            inside = (row["round__shoe_id"] == shoe if window == "shoe"
                      else row["round__settled_at"] >= since[window])
            if inside:
                grouped.setdefault((row["type"], window), []).append((row["n"], row["staked"], row["back"]))
    return {key: stats for key, rows in grouped.items() if (stats := ratio_stats(rows)) is not None}


@dataclass(frozen=True)
class Deviation:
    """One window's check: ``table`` (code), ``bet_type``, ``window``, ``stats`` (``WindowStats``),
    ``expected`` (theoretical RTP, fraction), ``z``, ``alert`` (True: beyond the threshold)."""

    table: str
    bet_type: str
    window: str
    stats: WindowStats
    expected: float
    z: float
    alert: bool

    def payload(self) -> dict:
        """The alert's JSON payload (RTP as fractions, money as decimal strings)."""
        s = self.stats
        return {"table": self.table, "bet_type": self.bet_type, "window": self.window,
                "observed": s.rtp, "expected": self.expected, "z": self.z if math.isfinite(self.z) else None,
                "se": s.se if math.isfinite(s.se) else None, "bets": s.bets, "rounds": s.rounds,
                "staked": str(s.staked), "returned": str(s.returned)}

    def message(self) -> str:
        """One line for operators (RTP in percent)."""
        s = self.stats
        return (f"{self.table} {self.bet_type}, {self.window} window: observed RTP {100 * s.rtp:.2f}% vs "
                f"theoretical {100 * self.expected:.2f}% ({self.z:+.1f} standard errors, {s.bets} bets "
                f"in {s.rounds} rounds)")


def check_table(table: Table, now=None, *, z_limit=None, min_bets=None) -> list[Deviation]:
    """Compare ``table``'s observed RTP (``observed``) with its theoretical report (computed and
    cached if missing, ``tables.rtp.table_report``). ``z_limit`` / ``min_bets`` default to
    ``settings.RTP_WATCH_Z`` / ``RTP_WATCH_MIN_BETS``. A window is flagged (``alert``) when it has
    at least ``min_bets`` bets, two rounds, and ``|z| > z_limit``. Returns every window checked."""
    z_limit = settings.RTP_WATCH_Z if z_limit is None else z_limit
    min_bets = settings.RTP_WATCH_MIN_BETS if min_bets is None else min_bets
    seen = observed(table, now)
    if not seen:
        return []
    rep = rtp.table_report(table, compute=True)
    out = []
    for (bet_type, window), stats in sorted(seen.items()):
        expected = rtp.expected_rtp(rep, bet_type)
        if expected is None:
            continue
        z = stats.z(expected)
        flagged = stats.bets >= min_bets and stats.rounds > 1 and abs(z) > z_limit
        out.append(Deviation(table.code, bet_type, window, stats, expected, z, flagged))
    return out


def raise_alerts(table: Table, deviations) -> list[Alert]:
    """Open or update one ``rtp_deviation`` alert per flagged deviation of ``table`` (see the
    module docstring); the table row is locked meanwhile so two runs cannot both open one.
    Returns the alerts created or updated."""
    flagged = [d for d in deviations if d.alert]
    if not flagged:
        return []
    done = []
    with transaction.atomic():
        lock_table(table)
        open_alerts = {(a.payload.get("bet_type"), a.payload.get("window")): a for a in Alert.objects.filter(
            kind=Alert.Kind.RTP_DEVIATION, table=table, acknowledged_at__isnull=True)}
        for d in flagged:
            alert = open_alerts.get((d.bet_type, d.window))
            if alert is None:
                alert = Alert.objects.create(kind=Alert.Kind.RTP_DEVIATION, severity=Alert.Severity.WARNING,
                                             table=table, message=d.message(), payload=d.payload())
            else:
                alert.message, alert.payload = d.message(), d.payload()
                alert.save(update_fields=["message", "payload"])
            done.append(alert)
    return done


def keep_figures(table: Table, deviations, now) -> None:
    """Replace ``table``'s ``RtpWatchFigure`` rows by ``deviations`` (its latest check, at ``now``)."""
    def finite(x):
        return x if math.isfinite(x) else None

    with transaction.atomic():
        RtpWatchFigure.objects.filter(table=table).delete()
        RtpWatchFigure.objects.bulk_create([
            RtpWatchFigure(table=table, bet_type=d.bet_type, window=d.window, observed=d.stats.rtp,
                           expected=d.expected, se=finite(d.stats.se), z=finite(d.z), bets=d.stats.bets,
                           rounds=d.stats.rounds, flagged=d.alert, checked_at=now) for d in deviations])


def watch(now=None) -> list[Alert]:
    """Check every table (``check_table``), keep its figures (``keep_figures``, for the dashboard)
    and raise or update its alerts (``raise_alerts``). Returns the alerts created or updated in
    this run."""
    now = now or timezone.now()
    alerts = []
    for table in Table.objects.order_by("pk"):
        deviations = check_table(table, now)
        keep_figures(table, deviations, now)
        alerts += raise_alerts(table, deviations)
    return alerts
