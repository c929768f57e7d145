"""Reads of bets and rounds that the player API and the operator admin (Bet Record) share.

Money is ``Decimal`` in the currency's major units. The detail of a bet (hands, decisions with
auto-play marked, side-bet pattern, odds) is settlement's stored ``SettlementDetail.detail``, or before
settlement the rules engine's replay of the round's effective record (``tables.engine.settle``),
which gives the same answer.
"""

from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from django.db.models import (Case, Count, DecimalField, Exists, F, OuterRef, Prefetch, Q, Subquery, Sum, Value, When,
                              prefetch_related_objects)
from django.db.models.functions import Coalesce

from accounts.models import MONEY, Account, Currency, LedgerEntry
from settlement.models import effective_record
from tables.engine import InvalidRecord, is_blackjack, score, settle
from tables.models import Round

from .models import Bet, BetExtra

ZERO = Value(Decimal(0), output_field=DecimalField(**MONEY))


def with_money(bets):
    """``bets`` (a ``Bet`` queryset) annotated with ``extras_total``, the sum of each bet's extra
    stakes (0 without any), from which ``Bet.staked``, ``Bet.returned_total`` and ``Bet.net`` (or
    ``wagering.models.bet_money`` for a value row) give its money: one subquery, where annotating
    those three as well repeated it four times in the SQL (and so in its compiling and planning).
    The currency is the bet's own ``currency_id``."""
    extras = (BetExtra.objects.filter(bet=OuterRef("pk")).order_by().values("bet")
              .annotate(total=Sum("amount")).values("total"))
    return bets.annotate(extras_total=Coalesce(Subquery(extras, output_field=DecimalField(**MONEY)), ZERO))


def bets_for_player(player):
    """The bets of ``player``, newest first (by ``placed_at``, then ``id``), with ``with_money``
    annotations and their round (without its record), table and currency.
    Lists read ``bet_rows_for_player`` instead."""
    return _all_bets().filter(player=player)


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


#: The values of a bet in a list (``bet_rows_for_player``): the bet, its ``extras_total``, its
#: round's public fields, its table's code and variant and its currency's minor units (the page's
#: rounds are joined; table and currency are small).
BET_ROW = ("id", "type", "seat", "stake", "extras_total", "returned", "state", "outcome", "placed_at",
           "settled_at", "currency_id", "currency__minor_units", "table__code", "table__variant", "round_id",
           "round__external_id", "round__shoe_round", "round__state")


# The queries above, built once per process and filtered per call: building the money
# annotations took more of a player API request than running its query. Never evaluated themselves.
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


@dataclass(frozen=True)
class Totals:
    """Totals of a set of bets in one ``currency`` (a ``Currency``): ``count``, ``staked``,
    ``returned``, ``net`` (returned - staked; negative = the player lost). Bets still open count as
    staked, not returned."""

    currency: Currency
    count: int
    staked: Decimal
    returned: Decimal

    @property
    def net(self):
        return self.returned - self.staked


def bet_totals(bets):
    """``[Totals]`` per currency (sorted by code) of ``bets`` (a ``Bet`` queryset, e.g. a filtered
    ``bets_for_player``). Two grouped scans: the bets' stakes and returns, then their extra stakes
    (a refunded bet not yet given a ``returned`` got its extras back too)."""
    bets = bets.order_by()
    refunded_stake = Case(When(state=Bet.State.REFUNDED, then=F("stake")), default=ZERO)
    rows = (bets.values(code=F("currency_id"))
            .annotate(n=Count("id"), staked=Sum("stake"), returned=Sum(Coalesce("returned", refunded_stake))))
    refunded_extra = Case(When(bet__state=Bet.State.REFUNDED, bet__returned__isnull=True, then=F("amount")),
                          default=ZERO)
    extras = {r["code"]: r for r in BetExtra.objects.filter(bet__in=bets.values("pk"))
              .values(code=F("bet__currency_id"))
              .annotate(staked=Sum("amount"), returned=Sum(refunded_extra))}
    currencies = Currency.objects.in_bulk([r["code"] for r in rows])
    totals = []
    for r in sorted(rows, key=lambda r: r["code"]):
        extra = extras.get(r["code"], {"staked": 0, "returned": 0})
        totals.append(Totals(currencies[r["code"]], r["n"], r["staked"] + extra["staked"],
                             r["returned"] + extra["returned"]))
    return totals


def bet_ledger_entries(bet):
    """The entries on ``bet``'s player's wallets that move ``bet``'s money, oldest first, with their
    transactions. Keys (``wagering.services``, ``settlement.services``): ``stake:<pk>``, each extra
    stake's key (``double:<pk>``, ``split:<pk>``, ``double:<pk>:2``, ...), ``payout:<pk>``,
    ``refund:<pk>`` and ``refund:<extra key>``, ``reverse:<pk>`` and ``resettle:<pk>:<n>``."""
    keys = [bet.stake_key(), f"payout:{bet.pk}", bet.refund_key(), f"reverse:{bet.pk}"]
    for extra in bet.extras.all():
        keys += [extra.key, extra.refund_key()]
    ours = Q(transaction__key__in=keys) | Q(transaction__key__startswith=f"resettle:{bet.pk}:")
    return (LedgerEntry.objects.filter(ours, account__kind=Account.Kind.WALLET, account__player_id=bet.player_id)
            .select_related("transaction", "account__currency").order_by("id"))


def ledger_entries_for_player(player):
    """Every entry on ``player``'s wallets, newest first (by ``id``), with their transactions and
    currencies."""
    wallets = list(Account.objects.filter(kind=Account.Kind.WALLET, player=player).values_list("pk", flat=True))
    return (LedgerEntry.objects.filter(account_id__in=wallets)
            .select_related("transaction", "account__currency").order_by("-id"))


def rounds_for_player(player):
    """The rounds in which ``player`` has at least one bet, with their table and currency."""
    return (Round.objects.filter(Exists(Bet.objects.filter(round=OuterRef("pk"), player=player)))
            .select_related("table__currency"))


def _replay(round_):
    """``(effective record or None, RoundResult or None)`` of ``round_``: its last correction,
    else the record received (``round_.table.currency`` loaded)."""
    record = effective_record(round_)
    return record, _settle(round_, record)


def _settle(round_, record):
    """The engine's ``RoundResult`` of ``record`` (``round_``'s effective record, or None) under
    ``round_``'s rules (``Round.rules``); None without a record or when it does not replay."""
    if not record:
        return None
    table = round_.table
    try:
        return settle(record, rules=round_.rules(), minor_units=table.currency.minor_units)
    except (InvalidRecord, ValueError):
        return None


def _dealer(cards):
    total = score(cards) if cards else 0
    return {"cards": list(cards), "score": total, "blackjack": is_blackjack(cards[:2]), "bust": total > 21}


def bet_replay(bet):
    """What the Bet Record shows of ``bet``'s play (``bet.round`` with its table and currency
    loaded, best with its settlement too, as ``bet_details_for_player`` does): a dict with ``dealer`` (cards, score, blackjack, bust) and the bet's settlement detail
    as settlement stored it (``SettlementDetail.detail``), or, before settlement, as the engine replays
    the round's effective record: ``staked``, ``returned``, ``outcome``, ``extras``; main/behind:
    ``hands`` (cards, score, outcome, stake, return, odds, ``decisions`` ``[{"action", "by":
    "player"|"auto"}]``) and ``insurance``; side bets: ``pattern`` and ``odds``; ``explanation``.
    A bet behind carries the seat's hands and decisions (table-public cards), never who sits there;
    a boundless bet only its own path. None while the round has no record."""
    record = effective_record(bet.round)
    if not record:
        return None
    stored = getattr(getattr(bet, "settlement", None), "detail", None)  # None: not settled
    if stored is None:
        result = _settle(bet.round, record)
        if result is None or bet.record_id not in result.bets:
            return None
        stored = result.bets[bet.record_id].to_dict()
    detail = {k: v for k, v in stored.items() if k not in PRIVATE_DETAIL}
    detail["dealer"] = _dealer(record.get("dealer") or [])
    return detail


#: Keys of the engine's per-bet detail the player API leaves out (the record's ids, the boundless path index).
PRIVATE_DETAIL = ("id", "player", "path")
#: The fields of a played hand anyone at the table saw (no decisions: they are a player's own).
PUBLIC_HAND_FIELDS = ("cards", "score", "soft", "blackjack", "split", "doubled", "surrendered", "outcome")


def _public_hand(hand):
    public = {f: getattr(hand, f) for f in PUBLIC_HAND_FIELDS}
    public["cards"] = list(hand.cards)
    return public


def round_public(round_):
    """The public face of ``round_``'s result (what the studio showed; ``round_.table.currency``
    loaded): ``{"dealer": {...}, "seats": [{"seat": n, "hands": [...]}],
    "player_cards": [...] (boundless: the shared sequence) or None, "ended_at_peek",
    "late_dealer_blackjack"}``; hands carry ``PUBLIC_HAND_FIELDS`` only. None without a result."""
    record, result = _replay(round_)
    if result is None:
        return None
    seats = [{"seat": int(n), "hands": [_public_hand(h) for h in hands]}
             for n, hands in sorted((result.seats or {}).items(), key=lambda item: int(item[0]))]
    return {"dealer": _dealer(result.dealer_cards), "seats": seats, "player_cards": record.get("player_cards"),
            "ended_at_peek": result.ended_at_peek, "late_dealer_blackjack": result.late_dealer_blackjack}
