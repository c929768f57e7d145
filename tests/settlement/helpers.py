"""Helpers of the settlement tests: a boundless round played through the wagering services."""

from decimal import Decimal

from accounts.models import Account, LedgerTransaction
from settlement.results import record_result
from tables.models import Round
from tests.factories import BoundlessTableFactory, PlayerFactory, RoundFactory, deal, scan
from wagering.closing import close_betting
from wagering.extras import add_extra_stake
from wagering.models import Bet
from wagering.placement import place_bets

# RULES 7 (the shared-hand case): dealer 7D TC (17, stands); players share TH 6C, then 5S.
DEALER = ["7D", "TC"]
PLAYER_CARDS = ["TH", "6C", "5S"]
#: record id -> (type, stake, actions, expected return)
BETS = {
    "hit": ("main", "10.00", ["hit"], Decimal("20.00")),        # 21 beats 17
    "stand": ("main", "10.00", ["stand"], Decimal("0.00")),     # 16 loses
    "auto": ("main", "10.00", [], Decimal("0.00")),             # auto-play stands on 16
    "surrender": ("main", "10.00", ["surrender"], Decimal("5.00")),
    "double": ("main", "10.00", ["double"], Decimal("40.00")),  # 20 staked, 21 wins
    "bust": ("bust_bonus", "1.00", None, Decimal("0.00")),      # dealer does not bust
}
#: What each record id has staked in all (the double's extra stake included).
STAKED = {"hit": Decimal(10), "stand": Decimal(10), "auto": Decimal(10), "surrender": Decimal(10),
          "double": Decimal(20), "bust": Decimal(1)}
FUNDS = Decimal("100.00")


def record_for(round_, bets=BETS, dealer=DEALER, player_cards=PLAYER_CARDS):
    """The round record (docs/round-record.md) of ``round_`` with ``bets`` ({id: (type, stake, actions, _)})."""
    players = dict(Bet.objects.filter(round=round_).values_list("record_id", "player__game_code"))
    items = []
    for rid, (bet_type, stake, actions, _) in bets.items():
        item = {"id": rid, "player": players.get(rid, f"p-{rid}"), "type": bet_type, "stake": stake}
        if actions is not None:
            item["actions"] = actions
        items.append(item)
    return {"format": "round-record/1", "variant": "boundless", "round": round_.external_id,
            "shoe_round": round_.shoe_round, "currency": "EUR", "dealer": list(dealer),
            "player_cards": list(player_cards), "bets": items}


def played_round(table=None, bets=BETS, *, result=True, players=None):
    """A boundless round with one funded player per bet of ``bets`` (the double's extra stake taken),
    betting closed and, if ``result``, its record taken (RESULTED). ``players``: {record id: Player}
    placing some of the bets (funded), a new player of the default operator placing each other.
    Returns ``(round, players)`` with ``players`` = {record id: Player}."""
    table = table or BoundlessTableFactory()
    round_ = RoundFactory(table=table)
    players = {rid: (players or {}).get(rid) or PlayerFactory(funded=str(FUNDS)) for rid in bets}
    outcomes = place_bets(round_id=round_.pk, bets=[
        {"key": f"{round_.pk}:{rid}", "player": players[rid].game_code, "type": t, "stake": stake, "record_id": rid}
        for rid, (t, stake, _, _) in bets.items()])
    assert all(o.error is None for o in outcomes), [o.error for o in outcomes]
    close_betting(round_id=round_.pk)
    record = record_for(round_, bets)
    for rid, (_, _, actions, _) in bets.items():
        if actions and actions[0] == "double":
            deal(round_.pk, record)  # a double is taken on the cards dealt
            add_extra_stake(round_id=round_.pk, bet=rid, kind="double", cards=PLAYER_CARDS[:2])
    if result:
        scan(round_.pk, record)
        record_result(round_id=round_.pk, record=record)
    return Round.objects.get(pk=round_.pk), players


def balance(player):
    """The player's EUR wallet balance."""
    return Account.objects.get(kind="wallet", player=player, currency="EUR").balance


def keys(prefix):
    """Ledger keys starting with ``prefix``."""
    return set(LedgerTransaction.objects.filter(key__startswith=prefix).values_list("key", flat=True))
