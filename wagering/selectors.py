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
    Q,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from accounts.models import MONEY, Currency
from accounts.money import amount_string
from accounts.sql import shaped_rows
from tables.models import Round

from .models import Bet, BetExtra, bet_money

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
    Lists read ``bet_rows_for_player`` instead, a bet's page ``bet_detail_row``."""
    return _all_bets().filter(player=player)


def bet_detail_row(player, pk):
    """``player``'s bet ``pk`` (an int) as a dict of ``BET_DETAIL`` (all a bet's page shows of the
    bet, its round and its settlement, in one query), or None when it is not theirs."""
    rows = shaped_rows(("bet detail",), lambda player_id, bet_id: _all_bet_details().filter(
        player_id=player_id, pk=bet_id), [player.pk, pk])
    return rows[0] if rows else None


def bets_for_operator(operator):
    """The bets of ``operator``'s players as ``bets_for_player`` gives a player's, with their
    ``player``. Lists read ``bet_rows_for_operator`` instead."""
    return _all_bets().filter(player__operator=operator).select_related("player")


def extras_of(bet):
    """The extra stakes of ``bet`` (a ``bet_detail_row``) in id order, as dicts of ``kind``,
    ``hand``, ``amount``, ``key`` and ``created_at``; no query for a bet without any: its
    ``extras_total`` is then 0 (extra stakes are positive, a database constraint)."""
    if not bet["extras_total"]:
        return []
    return list(BetExtra.objects.filter(bet_id=bet["id"]).order_by("id")
                .values("kind", "hand", "amount", "key", "created_at"))


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
#: The values of a bet on its page (``bet_detail_row``): ``BET_ROW``, the bet's player, record id
#: and follow flags, the correction and detail of its settlement (None before settlement), and
#: its round's dealer cards (the round's record itself is not read: a boundless round's holds
#: thousands of bets).
BET_DETAIL = BET_ROW + ("player_id", "record_id", "follow_double", "follow_split", "settlement__correction",
                        "settlement__detail", "round__record__dealer")


# The queries above, built once per process and filtered per call: building the money
# annotations costs more than running a player API request's query. Never evaluated themselves.
@cache
def _all_bets():
    return (with_money(Bet.objects.all()).select_related("round__table", "currency").defer("round__record")
            .order_by("-placed_at", "-id"))


@cache
def _all_bet_details():
    return _all_bets().order_by().values(*BET_DETAIL)


@cache
def _all_bet_rows():
    return _all_bets().values(*BET_ROW)


@cache
def _all_operator_bet_rows():
    return _all_bets().values(*OPERATOR_BET_ROW)


#: A bet whose money is final (counted in totals and rollups) / still in play.
CLOSED, OPEN = (Bet.State.SETTLED, Bet.State.REFUNDED), (Bet.State.PLACED, Bet.State.ACCEPTED)


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


def bet_totals(bets):
    """``[Totals]`` per currency (sorted by code) of ``bets`` (a ``Bet`` queryset, e.g. a filtered
    ``bets_for_player``). Two grouped scans: the bets' stakes and returns, then their extra stakes
    (a refunded bet not yet given a ``returned`` got its extras back too)."""
    bets = bets.order_by()
    closed, still_open = Q(state__in=CLOSED), ~Q(state__in=CLOSED)
    refunded_stake = Case(When(state=Bet.State.REFUNDED, then=F("stake")), default=ZERO)
    rows = (bets.values(code=F("currency_id"))
            .annotate(n=Count("id", filter=closed), staked=Coalesce(Sum("stake", filter=closed), ZERO),
                      returned=Coalesce(Sum(Coalesce("returned", refunded_stake), filter=closed), ZERO),
                      open_n=Count("id", filter=still_open),
                      open_staked=Coalesce(Sum("stake", filter=still_open), ZERO)))
    refunded_extra = Case(When(bet__state=Bet.State.REFUNDED, bet__returned__isnull=True, then=F("amount")),
                          default=ZERO)
    extra_closed, extra_open = Q(bet__state__in=CLOSED), ~Q(bet__state__in=CLOSED)
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


def open_bets(bets):
    """The bets of ``bets`` still in play (PLACED or ACCEPTED), found through their rounds not yet
    settled or voided (few, indexed by state), not by reading every bet's state."""
    return bets.filter(round__state__in=[s for s in Round.State if s not in (Round.State.SETTLED,
                                                                             Round.State.VOIDED)],
                       state__in=OPEN)


def has_open_bets(player):
    """Whether a bet of ``player`` is still in play (``open_bets``)."""
    return open_bets(bets_for_player(player)).exists()


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


#: The Bet Record CSV's columns: the bet, its operator and player, its money in its currency's minor
#: units (``staked``: the stake and every extra stake; ``returned`` and ``net`` as ``bet_money``
#: gives them, empty while the bet is open) and its outcome.
CSV_HEADER = ["bet_id", "record_id", "placed_at", "operator", "player", "table", "variant", "round", "type", "seat",
              "currency", "stake", "staked", "returned", "net", "state", "outcome", "settled_at"]
_CSV_VALUES = ("id", "record_id", "placed_at", "player__operator__code", "player__game_code", "table__code",
               "table__variant", "round__external_id", "type", "seat", "currency_id", "stake", "extras_total",
               "returned", "state", "outcome", "settled_at", "currency__minor_units")


def bets_for_csv(queryset):
    """Rows of ``queryset`` (a ``with_money`` queryset of bets) as tuples of ``CSV_HEADER``, money as
    decimal strings, streamed from the database in chunks."""
    for (pk, record_id, placed_at, operator, player, table, variant, round_, type_, seat, currency, stake, extras,
         returned, state, outcome, settled_at, minor_units) in (
            queryset.values_list(*_CSV_VALUES).iterator(chunk_size=2000)):
        staked, returned, net = bet_money(stake, extras, returned, state)
        yield (pk, record_id, placed_at, operator, player, table, variant, round_, type_, seat, currency,
               *(amount_string(x, minor_units) for x in (stake, staked, returned, net)), state, outcome, settled_at)
