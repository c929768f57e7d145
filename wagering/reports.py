"""Reads of the rollups (``wagering.rollups``; docs/reports.md) that the admin's reports, the
dashboard and the operator API share: report rows grouped by day, table, operator or currency
with their totals, and the totals of a bet list where the rollups can give them. They read a few
rows per operator, day, table and bet type, never the bets. Money is ``Decimal`` in the currency's
major units; money of different currencies is never added (every row and total is of one).
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import Count, F, Sum

from accounts.models import Currency

from .models import DailyAdjustment, DailyPlayer, DailyRollup, DailyRound
from .selectors import Totals

ZERO = Decimal(0)
#: How a report groups its rows: the dimension's lookup on the rollups' rows, and what it shows.
GROUPS = {"day": "day", "table": "table__code", "operator": "operator__code", "currency": "currency_id"}
MONEY = ("turnover", "returned", "refunded")


#: How many days a report shows when it is given its last day only.
DEFAULT_DAYS = 30


def default_first_day(day_to):
    """The first of the ``DEFAULT_DAYS`` days that end on ``day_to`` (a date), never before the
    calendar's first day (``date.min``)."""
    return date.fromordinal(max(day_to.toordinal() - (DEFAULT_DAYS - 1), date.min.toordinal()))


@dataclass
class ReportRow:
    """One row of a report, in one currency: ``key`` (the day, table code, operator code or currency
    code of its group; None for a totals row), ``currency`` (a code), ``rounds``, ``bets``, ``players``
    (distinct), ``turnover``, ``returned``, ``refunded`` (``Decimal``), ``refunded_bets``,
    ``adjustments`` / ``adjusted`` (None where the group has none: adjustments have no table)."""

    key: object
    currency: str
    rounds: int = 0
    bets: int = 0
    players: int = 0
    turnover: Decimal = ZERO
    returned: Decimal = ZERO
    refunded_bets: int = 0
    refunded: Decimal = ZERO
    adjustments: int | None = None
    adjusted: Decimal | None = None

    @property
    def ggr(self):
        """Gross gaming revenue: turnover - returned (the house's result; negative: the players won)."""
        return self.turnover - self.returned

    @property
    def hold(self):
        """GGR as a percentage of turnover (``Decimal``), None without turnover."""
        return None if not self.turnover else (100 * self.ggr / self.turnover).quantize(Decimal("0.01"))


@dataclass(frozen=True)
class Selection:
    """The rows a report reads: days ``day_from``..``day_to`` (dates, inclusive, in each operator's
    zone; None: open), an ``operator_id``, a ``table`` code, a ``currency`` code (each None: all).
    ``scope``: the operator id the reader is limited to (operator staff, an operator's key), or None."""

    day_from: object = None
    day_to: object = None
    operator_id: int | None = None
    table: str | None = None
    currency: str | None = None
    scope: int | None = None

    def apply(self, queryset, *, tables=True):
        """``queryset`` (of a rollup model) narrowed to the selection; ``tables=False``: its model
        has no table (adjustments), which a table selection leaves out altogether."""
        lookups = {"day__gte": self.day_from, "day__lte": self.day_to, "operator_id": self.operator_id,
                   "currency_id": self.currency}
        queryset = queryset.filter(**{k: v for k, v in lookups.items() if v is not None})
        if self.scope is not None:
            queryset = queryset.filter(operator_id=self.scope)
        if self.table is not None:
            queryset = queryset.filter(table__code=self.table) if tables else queryset.none()
        return queryset


def _grouped(queryset, group, **aggregates):
    """``{(group key, currency): {name: value}}`` of ``queryset`` aggregated per group and currency
    (``group`` None: per currency only)."""
    fields = ([GROUPS[group]] if group else []) + ["currency_id"]
    out = {}
    for row in queryset.order_by().values(*fields).annotate(**aggregates):
        key = (row[GROUPS[group]] if group else None, row["currency_id"])
        out[key] = row
    return out


def report(selection, group):
    """``(rows, totals)`` of ``selection`` grouped by ``group`` (a key of ``GROUPS``): one
    ``ReportRow`` per group and currency, in group order, and one totals row per currency (rounds
    and players distinct over the whole selection, not added up; adjustments, which have no table,
    left out of a report by table). Grouped reads of the rollups: money, rounds, players and
    adjustments per group, then the same per currency for the totals."""
    rows = {}
    for g in (group, None):
        money = _grouped(selection.apply(DailyRollup.objects.all()), g, bets=Sum("bets"), refunded_bets=Sum(
            "refunded_bets"), **{m: Sum(m) for m in MONEY})
        rounds = _grouped(selection.apply(DailyRound.objects.all()), g, n=Count("round", distinct=True))
        players = _grouped(selection.apply(DailyPlayer.objects.all()), g, n=Count("player", distinct=True))
        adjusted = {} if group == "table" else _grouped(selection.apply(DailyAdjustment.objects.all(), tables=False),
                                                        g, n=Sum("adjustments"), total=Sum("adjusted"))
        for key in money.keys() | players.keys() | adjusted.keys():
            m = money.get(key, {})
            row = ReportRow(key=key[0], currency=key[1], rounds=rounds.get(key, {}).get("n", 0),
                            bets=m.get("bets") or 0, players=players.get(key, {}).get("n", 0),
                            refunded_bets=m.get("refunded_bets") or 0,
                            **{name: m.get(name) or ZERO for name in MONEY})
            if group != "table":  # adjustments have no table: a report by table leaves them out
                a = adjusted.get(key, {})
                row.adjustments, row.adjusted = a.get("n") or 0, a.get("total") or ZERO
            rows.setdefault(g is None, []).append(row)
    return (sorted(rows.get(False, []), key=lambda r: (r.key, r.currency)),
            sorted(rows.get(True, []), key=lambda r: r.currency))


def rtp_series(selection):
    """Observed RTP per table and bet type per day: ``{(table code, bet type): [(day, rtp_staked,
    rtp_returned, bets)]}`` in day order (the RTP's measure, ``DailyRollup.rtp_staked``)."""
    series = {}
    for row in (selection.apply(DailyRollup.objects.filter(bets__gt=0)).order_by("day")
                .values("table__code", "bet_type", "day")
                .annotate(staked=Sum("rtp_staked"), back=Sum("rtp_returned"), n=Sum("bets"))):
        series.setdefault((row["table__code"], row["bet_type"]), []).append(
            (row["day"], row["staked"], row["back"], row["n"]))
    return series


def daily_money(selection):
    """``{currency: {day: (turnover, GGR)}}`` of ``selection`` (the dashboard's chart and figures)."""
    out = {}
    for row in (selection.apply(DailyRollup.objects.all()).order_by().values("currency_id", "day")
                .annotate(turnover=Sum("turnover"), returned=Sum("returned"))):
        out.setdefault(row["currency_id"], {})[row["day"]] = (row["turnover"], row["turnover"] - row["returned"])
    return out


def money_chart(series, days):
    """Chart.js data (``{type, labels, datasets}``) of ``series`` (``daily_money``) over ``days``
    (dates): turnover as bars and GGR as a line per currency, 0 on a day without play."""
    return {"type": "bar", "labels": [str(d) for d in days], "datasets": [
        {"type": kind, "label": f"{label} {code}", "data": [float(series[code].get(d, (0, 0))[i]) for d in days]}
        for code in sorted(series) for label, i, kind in (("turnover", 0, "bar"), ("GGR", 1, "line"))]}


def rollup_totals(selection, *, variant=None, bet_type=None, state=None, open_totals=()):
    """A bet list's ``[Totals]`` (``wagering.selectors.bet_totals``'s shape) from the rollups:
    the closed bets of ``selection`` (of one operator; whole days in its zone) of ``variant`` and
    ``bet_type`` (None: all), counting only the SETTLED or the REFUNDED ones when ``state`` says so
    (PLACED or ACCEPTED: none); ``open_totals``: the open bets' ``Totals`` (from the bets)."""
    rows = selection.apply(DailyRollup.objects.all())
    if variant:
        rows = rows.filter(table__variant=variant)
    if bet_type:
        rows = rows.filter(bet_type=bet_type)
    closed = {}
    if state in (None, "settled", "refunded"):
        settled = state != "refunded"
        refunded = state != "settled"
        for r in (rows.order_by().values(code=F("currency_id"))
                  .annotate(bets=Sum("bets"), turnover=Sum("turnover"), returned=Sum("returned"),
                            refunded_bets=Sum("refunded_bets"), refunded=Sum("refunded"))):
            count = settled * r["bets"] + refunded * r["refunded_bets"]
            staked = settled * r["turnover"] + refunded * r["refunded"]
            if count:
                closed[r["code"]] = (count, staked, settled * r["returned"] + refunded * r["refunded"])
    opened = {t.currency.code: t for t in open_totals}
    currencies = Currency.objects.in_bulk(closed.keys() | opened.keys())
    totals = []
    for code in sorted(closed.keys() | opened.keys()):
        count, staked, returned = closed.get(code, (0, ZERO, ZERO))
        o = opened.get(code)
        totals.append(Totals(currencies[code], count, staked, returned, o.open_count if o else 0,
                             o.open_staked if o else ZERO))
    return totals
