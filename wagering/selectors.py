"""Reads of bets that the player API, the operator API and the operator admin (Bet Record) share: a
player's (or an operator's players') bets with their money (staked with extras, returned, net),
pages of rows, totals, the rounds a player (or an operator's players) played. Money is ``Decimal``
in the currency's major units. A bet's play (its replay) and its ledger entries are
``settlement.selectors``'s.
"""

from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from django.db.models import (
    Case,
    Count,
    DecimalField,
    Exists,
    F,
    OuterRef,
    Prefetch,
    Q,
    Subquery,
    Sum,
    Value,
    When,
    prefetch_related_objects,
)
from django.db.models.functions import Coalesce

from accounts.models import MONEY, Currency
from tables.models import Round

from .models import Bet, BetExtra

ZERO = Value(Decimal(0), output_field=DecimalField(**MONEY))


def with_money(bets):
    """``bets`` (a ``Bet`` queryset) annotated with ``extras_total``, the sum of each bet's extra
    stakes (0 without any), from which ``Bet.staked``, ``Bet.returned_total`` and ``Bet.net`` (or
    ``wagering.models.bet_money`` for a value row) give its money: one subquery (annotating those
    three as well would repeat it four times in the SQL, and so in its compiling and planning).
    The currency is the bet's own ``currency_id``."""
    extras = (BetExtra.objects.filter(bet=OuterRef("pk")).order_by().values("bet")
              .annotate(total=Sum("amount")).values("total"))
    return bets.annotate(extras_total=Coalesce(Subquery(extras, output_field=DecimalField(**MONEY)), ZERO))


def bets_for_player(player):
    """The bets of ``player``, newest first (by ``placed_at``, then ``id``), with ``with_money``
    annotations and their round (without its record), table and currency.
    Lists read ``bet_rows_for_player`` instead."""
    return _all_bets().filter(player=player)


def bets_for_operator(operator):
    """The bets of ``operator``'s players as ``bets_for_player`` gives a player's, with their
    ``player``. Lists read ``bet_rows_for_operator`` instead."""
    return _all_bets().filter(player__operator=operator).select_related("player")


def bet_details_for_player(player):
    """``bets_for_player(player)`` with all a bet's page shows loaded in one query (the round's
    record, its table's currency, the ``settlement``); ``with_extras`` adds a bet's extras."""
    return _all_bet_details().filter(player=player)


def with_extras(bet):
    """``bet`` (a ``bets_for_player`` model) with its extra stakes prefetched (``bet.extras.all()``);
    no query for a bet without any: its ``extras_total`` is then 0 (extra stakes are positive, a
    database constraint)."""
    extras = BetExtra.objects.all() if bet.extras_total else BetExtra.objects.none()
    prefetch_related_objects([bet], Prefetch("extras", queryset=extras))
    return bet


def bet_rows_for_player(player):
    """``bets_for_player(player).values(*BET_ROW)``: the rows of a list (the select_related joins
    drop out)."""
    return _all_bet_rows().filter(player=player)


def bet_rows_for_operator(operator):
    """``bets_for_operator(operator).values(*OPERATOR_BET_ROW)``: the rows of a list."""
    return _all_operator_bet_rows().filter(player__operator=operator)


#: The values of a bet in a list (``bet_rows_for_player``): the bet, its ``extras_total``, its
#: round's public fields, its table's code and variant and its currency's minor units (the page's
#: rounds are joined; table and currency are small).
BET_ROW = ("id", "type", "seat", "stake", "extras_total", "returned", "state", "outcome", "placed_at",
           "settled_at", "currency_id", "currency__minor_units", "table__code", "table__variant", "round_id",
           "round__external_id", "round__shoe_round", "round__state")
#: ``BET_ROW`` and the player's code, for lists of many players' bets (``bet_rows_for_operator``).
OPERATOR_BET_ROW = (*BET_ROW, "player__code")


# The queries above, built once per process and filtered per call: building the money
# annotations costs more than running a player API request's query. Never evaluated themselves.
@cache
def _all_bets():
    return (with_money(Bet.objects.all()).select_related("round__table", "currency").defer("round__record")
            .order_by("-placed_at", "-id"))


@cache
def _all_bet_details():
    return _all_bets().defer(None).select_related("round__table__currency", "currency", "settlement")


@cache
def _all_bet_rows():
    return _all_bets().values(*BET_ROW)


@cache
def _all_operator_bet_rows():
    return _all_bets().values(*OPERATOR_BET_ROW)


@dataclass(frozen=True)
class Totals:
    """Totals of a set of bets in one ``currency`` (a ``Currency``), over settled money only: the
    bets settled or refunded (``count``, ``staked``, ``returned``, ``net`` = returned - staked;
    negative = the player lost); the bets still open apart (``open_count``, ``open_staked``: their
    stakes and extra stakes, neither won nor lost yet)."""

    currency: Currency
    count: int
    staked: Decimal
    returned: Decimal
    open_count: int = 0
    open_staked: Decimal = Decimal(0)

    @property
    def net(self):
        return self.returned - self.staked


#: The bets whose money is settled: paid out (settled) or given back (refunded).
_CLOSED = (Bet.State.SETTLED, Bet.State.REFUNDED)


def bet_totals(bets):
    """``[Totals]`` per currency (sorted by code) of ``bets`` (a ``Bet`` queryset, e.g. a filtered
    ``bets_for_player``). Two grouped scans: the bets' stakes and returns, then their extra stakes
    (a refunded bet not yet given a ``returned`` got its extras back too)."""
    bets = bets.order_by()
    closed, still_open = Q(state__in=_CLOSED), ~Q(state__in=_CLOSED)
    refunded_stake = Case(When(state=Bet.State.REFUNDED, then=F("stake")), default=ZERO)
    rows = (bets.values(code=F("currency_id"))
            .annotate(n=Count("id", filter=closed), staked=Coalesce(Sum("stake", filter=closed), ZERO),
                      returned=Coalesce(Sum(Coalesce("returned", refunded_stake), filter=closed), ZERO),
                      open_n=Count("id", filter=still_open),
                      open_staked=Coalesce(Sum("stake", filter=still_open), ZERO)))
    refunded_extra = Case(When(bet__state=Bet.State.REFUNDED, bet__returned__isnull=True, then=F("amount")),
                          default=ZERO)
    extra_closed, extra_open = Q(bet__state__in=_CLOSED), ~Q(bet__state__in=_CLOSED)
    extras = {r["code"]: r for r in BetExtra.objects.filter(bet__in=bets.values("pk"))
              .values(code=F("bet__currency_id"))
              .annotate(staked=Coalesce(Sum("amount", filter=extra_closed), ZERO),
                        open_staked=Coalesce(Sum("amount", filter=extra_open), ZERO),
                        returned=Coalesce(Sum(refunded_extra, filter=extra_closed), ZERO))}
    currencies = Currency.objects.in_bulk([r["code"] for r in rows])
    totals = []
    for r in sorted(rows, key=lambda r: r["code"]):
        extra = extras.get(r["code"], {"staked": 0, "returned": 0, "open_staked": 0})
        totals.append(Totals(currencies[r["code"]], r["n"], r["staked"] + extra["staked"],
                             r["returned"] + extra["returned"], r["open_n"], r["open_staked"] + extra["open_staked"]))
    return totals


def rounds_for_player(player):
    """The rounds in which ``player`` has at least one bet, with their table and currency."""
    return _rounds_with(Bet.objects.filter(player=player))


def rounds_for_operator(operator):
    """The rounds in which one of ``operator``'s players has at least one bet, with their table and
    currency."""
    return _rounds_with(Bet.objects.filter(player__operator=operator))


def _rounds_with(bets):
    """The rounds holding at least one of ``bets`` (a ``Bet`` queryset), with their table and currency."""
    return Round.objects.filter(Exists(bets.filter(round=OuterRef("pk")))).select_related("table__currency")


#: The Bet Record CSV columns: (header, value path for ``values_list``).
CSV_COLUMNS = [
    ("bet_id", "id"), ("record_id", "record_id"), ("placed_at", "placed_at"), ("player", "player__game_code"),
    ("table", "table__code"), ("variant", "table__variant"), ("round", "round__external_id"),
    ("type", "type"), ("seat", "seat"), ("stake", "stake"), ("currency", "currency_id"),
    ("state", "state"), ("outcome", "outcome"), ("returned", "returned"), ("settled_at", "settled_at"),
]


def bets_for_csv(queryset):
    """Rows of ``queryset`` as tuples of ``CSV_COLUMNS``, streamed from the database in chunks."""
    return queryset.values_list(*(path for _, path in CSV_COLUMNS)).iterator(chunk_size=2000)
