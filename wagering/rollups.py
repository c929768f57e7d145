"""The rollups: each operator's days of play, kept as the money moves (docs/reports.md).

A bet belongs to the day it was placed on, in its player's operator's zone (``Operator.time_zone``),
and to its table, currency and bet type. What every settlement, void, resettle, refund and
adjustment changes is added to the rows of those days in the database transaction of that
change, as its last writes (the rows every service of a table contends for are held only until
the commit):

- ``DailyRollup``: the settled money per day, operator, table and bet type (``Figures``); a
  change adds the difference between what its bets count after it and before it (``record``),
  so a resettle or a void changes the days the round's bets were placed on, never today;
- ``DailyRound``: the rounds counted (a bet of the operator's that stood), added when a round
  is settled, removed when a settled round is voided;
- ``DailyPlayer``: the players counted (a bet placed that day), added when betting closes;
- ``DailyAdjustment``: manual and dispute adjustments, on the day they are made.

Increments are atomic: PostgreSQL's ``INSERT ... ON CONFLICT DO UPDATE SET x = x + ...`` (two
settlements of one day and table at once both count); elsewhere (SQLite, whose transactions hold
the database's one write lock from their start) read, add and write in ``Decimal``.
``rebuild`` recomputes any days from the bets and the ledger and says whether they equal what
was kept. Money is ``Decimal`` in the currency's major units with its minor-unit decimals.
"""

from dataclasses import astuple, dataclass, fields
from datetime import UTC, date, datetime, time
from decimal import Decimal

from django.db import NotSupportedError, connection, transaction
from django.db.models import Count, DateField, DateTimeField, Func, Sum, Value
from django.utils import timezone

from accounts.models import Account, LedgerEntry, LedgerTransaction, Operator
from accounts.sql import values_list_rows
from tables.models import Round

from .models import Bet, DailyAdjustment, DailyPlayer, DailyRollup, DailyRound

ZERO = Decimal(0)


class LocalDate(Func):
    """The date of a datetime expression in the IANA zone named by another expression (a column):
    ``LocalDate("placed_at", "player__operator__time_zone")``. PostgreSQL and SQLite only."""

    output_field = DateField()
    arity = 2

    def as_sql(self, compiler, connection, **extra):
        raise NotSupportedError(f"LocalDate is not written for {connection.vendor}")

    def as_postgresql(self, compiler, connection):
        return super().as_sql(compiler, connection, template="((%(expressions)s)::date)",
                              arg_joiner=" AT TIME ZONE ")

    def as_sqlite(self, compiler, connection):  # Django's own function (django.db.backends.sqlite3)
        return super().as_sql(compiler, connection, template="django_datetime_cast_date(%(expressions)s, 'UTC')")


#: The day a bet belongs to: its placing time's date in its operator's zone.
BET_DAY = LocalDate("placed_at", "player__operator__time_zone")
#: A ``DailyRollup`` row's key: (day, operator id, table id, currency code, bet type).
KEY = ("day", "operator_id", "table_id", "currency_id", "bet_type")


@dataclass
class Figures:
    """What some bets count in a ``DailyRollup`` row (its columns: see the model). Added and
    subtracted field by field."""

    bets: int = 0
    turnover: Decimal = ZERO
    returned: Decimal = ZERO
    refunded_bets: int = 0
    refunded: Decimal = ZERO
    rtp_staked: Decimal = ZERO
    rtp_returned: Decimal = ZERO

    def __add__(self, other):
        return Figures(*(a + b for a, b in zip(astuple(self), astuple(other))))

    def __sub__(self, other):
        return Figures(*(a - b for a, b in zip(astuple(self), astuple(other))))

    def __bool__(self):
        return any(astuple(self))


COLUMNS = tuple(f.name for f in fields(Figures))


#: Planner settings (``accounts.sql.values_list_rows``) of ``figures_of`` over ONE round's bets
#: (thousands of them): each bet's player reached through its primary key (memoized per player)
#: and the groups hashed, so that the read costs the round's bets, never a scan of every player
#: (which the planner, misjudging how many bets a round holds, would choose), nor a sort.
ONE_ROUND = {"jit": "off", "enable_hashjoin": "off", "enable_mergejoin": "off", "enable_sort": "off",
             "max_parallel_workers_per_gather": "0"}


def figures_of(bets, *, planner=None):
    """``{key: Figures}`` (``KEY``) of the closed bets among ``bets`` (a ``Bet`` queryset): a
    SETTLED bet counts its staked (from its settlement detail: stake and every extra stake) and
    returned, and the RTP's measure; a REFUNDED bet what it got back. One grouped query of the
    bets (joined to their players' operators for the day), run with ``planner`` settings
    (``ONE_ROUND`` for one round's bets, inside a transaction), and one of their few distinct
    details."""
    rows = values_list_rows(bets.filter(state__in=[Bet.State.SETTLED, Bet.State.REFUNDED]).order_by()
                            .values_list(BET_DAY, "player__operator_id", "table_id", "currency_id", "type", "state",
                                         "settlement_id")
                            .annotate(n=Count("id"), stake=Sum("stake"), returned=Sum("returned")), planner=planner)
    detail_model = Bet._meta.get_field("settlement").related_model
    details = dict(detail_model.objects.filter(pk__in={r[6] for r in rows if r[5] == Bet.State.SETTLED})
                   .values_list("pk", "detail"))
    out = {}
    for day, operator, table, currency, bet_type, state, settlement, n, stake, returned in rows:
        if state == Bet.State.SETTLED:
            if settlement not in details:
                raise ValueError(f"settled bets of table {table} without their settlement detail ({settlement})")
            f = _settled(n, details[settlement], stake, returned)
        else:
            f = Figures(refunded_bets=n, refunded=returned)
        key = (day, operator, table, currency, bet_type)
        out[key] = out.get(key, Figures()) + f
    return out


def _settled(n, detail, stake, returned):
    """The ``Figures`` of ``n`` SETTLED bets sharing the settlement ``detail`` (its ``staked``: stake
    and extra stakes of one bet, its ``insurance``), whose stakes sum to ``stake`` and returns to
    ``returned``."""
    staked = n * Decimal(detail["staked"])
    insurance = detail.get("insurance") or {}
    kept = n * (Decimal(insurance.get("stake", "0")) - Decimal(insurance.get("returned", "0")))
    return Figures(bets=n, turnover=staked, returned=returned, rtp_staked=stake,
                   rtp_returned=returned - staked + stake + kept)


def difference(after, before):
    """``after - before`` (two ``figures_of`` results), keys without change left out."""
    return {k: d for k in after.keys() | before.keys()
            if (d := after.get(k, Figures()) - before.get(k, Figures()))}


def _add(model, key_columns, conflict, value_columns, rows):
    """Add ``rows`` (``{key tuple: value tuple}``: values of ``key_columns`` and ``value_columns``)
    to ``model``'s rows, unique on ``conflict`` (key columns), creating missing ones, in key order
    (the order every writer locks them in). PostgreSQL: one ``INSERT ... ON CONFLICT DO UPDATE``;
    elsewhere read and write under the transaction's write lock."""
    ordered = sorted(rows.items(), key=lambda kv: tuple(str(k) for k in kv[0]))
    if not ordered:
        return
    if connection.vendor != "postgresql":
        for key, values in ordered:
            lookup = {c: key[key_columns.index(c)] for c in conflict}
            row = model.objects.filter(**lookup).first() or model(**dict(zip(key_columns, key)))
            for column, value in zip(value_columns, values):
                setattr(row, column, getattr(row, column) + value)
            row.save()
        return
    q = connection.ops.quote_name
    table, columns = q(model._meta.db_table), (*key_columns, *value_columns)
    values = ", ".join(["(" + ", ".join(["%s"] * len(columns)) + ")"] * len(ordered))
    increments = ", ".join(f"{q(c)} = {table}.{q(c)} + excluded.{q(c)}" for c in value_columns)
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {table} ({', '.join(map(q, columns))}) VALUES {values} "
                       f"ON CONFLICT ({', '.join(map(q, conflict))}) DO UPDATE SET {increments}",
                       [v for key, vals in ordered for v in (*key, *vals)])


def record(changes):
    """Add ``changes`` (``{key: Figures}``, e.g. ``difference(after, before)``) to the
    ``DailyRollup`` rows, in the caller's transaction."""
    _add(DailyRollup, KEY, ("operator_id", "day", "table_id", "bet_type"), COLUMNS,
         {k: astuple(f) for k, f in changes.items()})


def round_settled(round_, settled, span):
    """``round_`` (locked) was just settled: add its settled bets to the rollups and count it on
    each day and operator they belong to (``DailyRound``). ``settled``: ``[(operator id, detail,
    returned, n)]``, ``n`` bets of that operator's players settled alike: ``detail`` their stored
    settlement detail (its ``type``, ``stake``, ``staked`` and ``insurance``), ``returned`` each
    one's return; ``span``: ``(first, last)``, the bets' earliest and latest placing times. The
    bets' day is the day of both in their operator's zone; where a zone puts them on two days
    (a round across midnight), the figures are read from the bets instead (``figures_of``).
    Returns what was added (``{key: Figures}``)."""
    days = _days_of(span, {operator for operator, *_ in settled})
    if all(first == last for first, last in days.values()):
        added, table, currency = {}, round_.table_id, round_.table.currency_id
        for operator, detail, returned, n in settled:
            key = (days[operator][0], operator, table, currency, detail["type"])
            added[key] = added.get(key, Figures()) + _settled(n, detail, n * Decimal(detail["stake"]), n * returned)
    else:
        added = figures_of(Bet.objects.filter(round=round_, state=Bet.State.SETTLED), planner=ONE_ROUND)
    record(added)
    DailyRound.objects.bulk_create(
        [DailyRound(day=day, operator_id=operator, table_id=table, currency_id=currency, round=round_)
         for day, operator, table, currency in sorted({k[:4] for k, f in added.items() if f.bets}, key=str)],
        ignore_conflicts=True)
    return added


def _days_of(span, operators):
    """``{operator id: (day of first, day of last)}``: ``span``'s two instants as dates in the zone of
    each of ``operators`` (ids), computed by the database as ``BET_DAY`` computes a bet's."""
    if not operators:
        return {}
    first, last = (Value(moment, output_field=DateTimeField()) for moment in span)
    return {pk: (a, b) for pk, a, b in Operator.objects.filter(pk__in=operators).values_list(
        "pk", LocalDate(first, "time_zone"), LocalDate(last, "time_zone"))}


def round_reversed(round_):
    """A settled ``round_`` was voided: it counts on no day any more (its refunds are ``record``'s)."""
    DailyRound.objects.filter(round=round_).delete()


def players_of(round_):
    """Count the players of ``round_``'s bets on their days (``DailyPlayer``): when betting closes,
    or when a round still open is voided. One ``INSERT ... SELECT DISTINCT``, existing rows kept."""
    select = (Bet.objects.filter(round=round_).order_by()
              .values_list(BET_DAY, "player__operator_id", "table_id", "currency_id", "player_id").distinct())
    sql, params = select.query.sql_with_params()
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {q(DailyPlayer._meta.db_table)} "
                       f"({', '.join(map(q, ('day', 'operator_id', 'table_id', 'currency_id', 'player_id')))}) "
                       f"{sql} ON CONFLICT DO NOTHING", params)


def _day_of(operator_id, moment):
    zone = Operator.objects.values_list("time_zone", flat=True).get(pk=operator_id)
    return timezone.localtime(moment, zone).date()


def adjusted(*, wallet, amount, at=None):
    """An adjustment of ``amount`` (signed ``Decimal``: > 0 credited) to ``wallet`` (a player's
    ``Account``) was just posted: count it on today (``at``) in the wallet's operator's zone."""
    day = _day_of(wallet.operator_id, at or timezone.now())
    _add(DailyAdjustment, ("day", "operator_id", "currency_id"), ("operator_id", "day", "currency_id"),
         ("adjustments", "adjusted"), {(day, wallet.operator_id, wallet.currency_id): (1, amount)})


# --- rebuild -------------------------------------------------------------------------------------

@dataclass
class DayCheck:
    """One operator's day as ``rebuild`` found it: ``differences`` (text lines; empty: equal)."""

    day: object
    operator: str
    differences: list


def _midnight(ordinal, zone):
    """The instant (aware, UTC) that starts the day of proleptic ``ordinal`` in ``zone``; None
    where that day or instant lies outside the years 1-9999: nothing is that early or late."""
    try:
        return datetime.combine(date.fromordinal(ordinal), time.min, tzinfo=zone).astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _within(field, day, zone):
    """The lookups of ``field`` (a datetime column) within ``day`` in ``zone``: ``[start, end)``,
    a bound beyond the calendar left out."""
    start, end = _midnight(day.toordinal(), zone), _midnight(day.toordinal() + 1, zone)
    return {**({f"{field}__gte": start} if start else {}), **({f"{field}__lt": end} if end else {})}


def _recomputed(operator, day):
    """What ``operator``'s ``day`` should hold, from its bets and its ledger: ``(rollups, rounds,
    players, adjustments)`` as ``_kept`` gives them (the players of a round still open for betting
    not yet: they count when betting closes)."""
    zone = operator.time_zone
    bets = Bet.objects.filter(player__operator=operator, **_within("placed_at", day, zone))
    rollups = {k: astuple(f) for k, f in figures_of(bets).items()}
    rounds = set(bets.filter(state=Bet.State.SETTLED).order_by()
                 .values_list(BET_DAY, "player__operator_id", "table_id", "currency_id", "round_id").distinct())
    players = set(bets.exclude(round__state=Round.State.OPEN).order_by()  # counted when betting closes
                  .values_list(BET_DAY, "player__operator_id", "table_id", "currency_id", "player_id").distinct())
    adjustments = {(day, operator.pk, currency): (n, total) for currency, n, total in
                   LedgerEntry.objects.filter(transaction__kind=LedgerTransaction.Kind.ADJUSTMENT,
                                              account__kind=Account.Kind.WALLET, account__operator=operator,
                                              **_within("transaction__created_at", day, zone))
                   .order_by().values_list("account__currency_id").annotate(n=Count("id"), total=Sum("amount"))}
    return rollups, rounds, players, adjustments


def _kept(operator, day):
    """What the rollups hold for ``operator``'s ``day``: ``({key: value tuple}, {round key},
    {player key}, {adjustment key: (count, sum)})``."""
    mine = {"operator": operator, "day": day}
    rollups = {tuple(r[:5]): tuple(r[5:]) for r in DailyRollup.objects.filter(**mine).values_list(*KEY, *COLUMNS)
               if any(r[5:])}
    rounds = set(DailyRound.objects.filter(**mine).values_list("day", "operator_id", "table_id", "currency_id",
                                                               "round_id"))
    players = set(DailyPlayer.objects.filter(**mine).values_list("day", "operator_id", "table_id", "currency_id",
                                                                 "player_id"))
    adjustments = {(r[0], r[1], r[2]): (r[3], r[4]) for r in DailyAdjustment.objects.filter(**mine).values_list(
        "day", "operator_id", "currency_id", "adjustments", "adjusted") if r[3]}
    return rollups, rounds, players, adjustments


def _differences(kept, recomputed):
    names = ("rollup", "round", "player", "adjustment")
    lines = []
    for name, have, want in zip(names, kept, recomputed):
        if isinstance(have, dict):
            for key in sorted(have.keys() | want.keys(), key=str):
                if have.get(key) != want.get(key):
                    lines.append(f"{name} {key}: kept {have.get(key)}, recomputed {want.get(key)}")
        else:
            lines += [f"{name} {key}: kept, not recomputed" for key in sorted(have - want, key=str)[:20]]
            lines += [f"{name} {key}: recomputed, not kept" for key in sorted(want - have, key=str)[:20]]
    return lines


def _write(operator, day, recomputed):
    rollups, rounds, players, adjustments = recomputed
    mine = {"operator": operator, "day": day}
    for model in (DailyRollup, DailyRound, DailyPlayer, DailyAdjustment):
        model.objects.filter(**mine).delete()
    DailyRollup.objects.bulk_create([DailyRollup(**dict(zip(KEY + COLUMNS, k + v))) for k, v in rollups.items()])
    DailyRound.objects.bulk_create([DailyRound(day=d, operator_id=o, table_id=t, currency_id=c, round_id=r)
                                    for d, o, t, c, r in rounds], batch_size=5000)
    DailyPlayer.objects.bulk_create([DailyPlayer(day=d, operator_id=o, table_id=t, currency_id=c, player_id=p)
                                     for d, o, t, c, p in players], batch_size=5000)
    DailyAdjustment.objects.bulk_create([DailyAdjustment(day=d, operator_id=o, currency_id=c, adjustments=n,
                                                         adjusted=total)
                                         for (d, o, c), (n, total) in adjustments.items()])


def rebuild(*, day_from, day_to, operators=None, write=True):
    """Recompute every day from ``day_from`` to ``day_to`` (dates, inclusive) of ``operators``
    (``Operator`` instances; default all) from the bets and the ledger, compare each with what
    the rollups kept, and, with ``write``, replace what was kept by what was recomputed. Each day
    in one transaction that holds the rollups' tables against other writers (PostgreSQL: ``LOCK
    TABLE ... SHARE ROW EXCLUSIVE``), so that no change is lost while it is rewritten. Returns the
    ``DayCheck`` of every day with rows on either side."""
    checks = []
    operators = list(operators if operators is not None else Operator.objects.order_by("code"))
    for ordinal in range(day_from.toordinal(), day_to.toordinal() + 1):
        day = date.fromordinal(ordinal)
        for operator in operators:
            with transaction.atomic():
                if write and connection.vendor == "postgresql":
                    with connection.cursor() as cursor:
                        cursor.execute("LOCK TABLE " + ", ".join(connection.ops.quote_name(m._meta.db_table) for m in
                                       (DailyRollup, DailyRound, DailyPlayer, DailyAdjustment))
                                       + " IN SHARE ROW EXCLUSIVE MODE")
                kept, recomputed = _kept(operator, day), _recomputed(operator, day)
                if any(kept) or any(recomputed):
                    checks.append(DayCheck(day, operator.code, _differences(kept, recomputed)))
                    if write and checks[-1].differences:
                        _write(operator, day, recomputed)
    return checks
