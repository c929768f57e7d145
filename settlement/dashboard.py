"""The dashboard: what an operator site's user must see at a glance (the admin's index page).

Each figure is one small read (the rollups, indexed states, the RTP watch's kept figures), never a
scan of the bets, and each is scoped: ``operator_id`` None for the provider's staff (everything),
else one operator's rows only (its days in its zone, rounds holding its players' bets, its
players' disputes, alerts and wallet movements); the RTP watch is per table over every
operator's bets: the provider's only. Money is ``Decimal`` in the currency's major units.
"""

from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, Exists, OuterRef, Q
from django.db.models.functions import TruncHour
from django.utils import timezone

from tables.models import Round
from wagering.models import Bet
from wagering.reports import Selection, daily_money, money_chart
from wallets.models import WalletMovement

from .models import Alert, Dispute, RtpWatchFigure

#: Open disputes' ages: (label, older than).
AGES = [("under an hour", timedelta(0)), ("1 to 24 hours", timedelta(hours=1)), ("1 to 7 days", timedelta(days=1)),
        ("over 7 days", timedelta(days=7))]


@dataclass
class Dashboard:
    """``money``: ``{currency: {"today": (turnover, GGR), "week": (turnover, GGR)}}``; ``chart``:
    Chart.js data of turnover and GGR per day over ``days``; ``rounds_per_hour``: ``[(hour,
    count)]`` of the last 24 hours; ``disputes``: ``[(age label, count)]``; ``alerts``:
    ``{severity: count}``; ``rounds``: ``{"suspended", "stuck", "failed": count}``; ``wallet``:
    ``{"pending", "failing", "failed": count}``; ``rtp``: the RTP watch's day window per table and
    bet type (``RtpWatchFigure`` with its band), None for operator staff."""

    today: object
    money: dict = field(default_factory=dict)
    chart: dict = field(default_factory=dict)
    rounds_per_hour: list = field(default_factory=list)
    disputes: list = field(default_factory=list)
    alerts: dict = field(default_factory=dict)
    rounds: dict = field(default_factory=dict)
    wallet: dict = field(default_factory=dict)
    rtp: list | None = None


def _rounds_of(operator_id):
    """Rounds, narrowed to those holding a bet of ``operator_id``'s players (None: all)."""
    rounds = Round.objects.all()
    if operator_id is not None:
        rounds = rounds.filter(Exists(Bet.objects.filter(round=OuterRef("pk"), player__operator_id=operator_id)))
    return rounds


def _aged(now, older, younger):
    """Created more than ``older`` ago and, unless None, at most ``younger`` ago."""
    aged = Q(created_at__lte=now - older)
    return aged if younger is None else aged & Q(created_at__gt=now - younger)


def build(*, operator_id, zone, now=None):
    """The ``Dashboard`` for ``operator_id`` (None: the provider) at ``now``, its days in ``zone``
    (an operator's days are its own zone's)."""
    now = now or timezone.now()
    today = timezone.localtime(now, zone).date()
    board = Dashboard(today=today)
    week_start = today - timedelta(days=today.weekday())
    days = [today - timedelta(days=n) for n in range(29, -1, -1)]
    series = daily_money(Selection(day_from=days[0], day_to=today, scope=operator_id))
    for code, per_day in sorted(series.items()):
        week = [v for d, v in per_day.items() if d >= week_start]
        board.money[code] = {"today": per_day.get(today, (0, 0)),
                             "week": (sum(t for t, _ in week), sum(g for _, g in week))}
    board.chart = money_chart(series, days)
    hours = (_rounds_of(operator_id).filter(opened_at__gte=now - timedelta(hours=24)).order_by()
             .annotate(hour=TruncHour("opened_at", tzinfo=zone)).values("hour").annotate(n=Count("id")))
    board.rounds_per_hour = sorted((r["hour"], r["n"]) for r in hours)
    disputes = Dispute.objects.filter(status__in=[Dispute.Status.OPEN, Dispute.Status.INVESTIGATING])
    alerts = Alert.objects.filter(acknowledged_at__isnull=True)
    movements = WalletMovement.objects.all()
    if operator_id is not None:
        disputes = disputes.filter(player__operator_id=operator_id)
        alerts = alerts.filter(player__operator_id=operator_id)
        movements = movements.filter(operator_id=operator_id)
    limits = [older for _, older in AGES] + [None]
    ages = disputes.aggregate(**{f"age{i}": Count("id", filter=_aged(now, limits[i], limits[i + 1]))
                                 for i in range(len(AGES))})
    board.disputes = [(label, ages[f"age{i}"]) for i, (label, _) in enumerate(AGES)]
    board.alerts = {s: 0 for s in Alert.Severity.values} | dict(
        alerts.order_by().values_list("severity").annotate(n=Count("id")))
    stuck_before = now - timedelta(seconds=settings.SETTLEMENT_REDRIVE_AFTER_SECONDS)
    board.rounds = _rounds_of(operator_id).filter(state__in=[Round.State.SUSPENDED, Round.State.RESULTED,
                                                             Round.State.SETTLEMENT_FAILED]).aggregate(
        suspended=Count("id", filter=Q(state=Round.State.SUSPENDED)),
        stuck=Count("id", filter=Q(state=Round.State.RESULTED, resulted_at__lte=stuck_before)),
        failed=Count("id", filter=Q(state=Round.State.SETTLEMENT_FAILED)))
    board.wallet = movements.filter(state__in=[WalletMovement.State.PENDING, WalletMovement.State.FAILED]).aggregate(
        pending=Count("id", filter=Q(state=WalletMovement.State.PENDING)),
        failing=Count("id", filter=Q(state=WalletMovement.State.PENDING, failing_since__isnull=False)),
        failed=Count("id", filter=Q(state=WalletMovement.State.FAILED)))
    if operator_id is None:
        z = settings.RTP_WATCH_Z
        board.rtp = [{"figure": f, "low": None if f.se is None else f.expected - z * f.se,
                      "high": None if f.se is None else f.expected + z * f.se}
                     for f in RtpWatchFigure.objects.filter(window="day").select_related("table")
                     .order_by("table__code", "bet_type")]
    return board
