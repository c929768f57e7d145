"""Small round-record builders for the engine tests."""
from decimal import Decimal

from tables.engine import settle


def seated(variant, dealer, seats, bets, shoe_round=12):
    """seats: {n: (cards "8H 8D 3C", actions "split double")}; bets: list of dicts (ids auto)."""
    out = []
    for i, b in enumerate(bets):
        b = dict(b)
        b.setdefault("id", f"b{i + 1}")
        b.setdefault("player", f"p-{b['id']}")
        out.append(b)
    return {"format": "round-record/1", "variant": variant, "round": "T-1", "shoe_round": shoe_round,
            "currency": "EUR", "dealer": dealer.split(),
            "seats": {str(n): {"cards": c.split(), "actions": a.split()} for n, (c, a) in seats.items()},
            "bets": out}


def boundless(dealer, player_cards, bets, shoe_round=12):
    out = []
    for i, b in enumerate(bets):
        b = dict(b)
        b.setdefault("id", f"b{i + 1}")
        b.setdefault("player", f"p-{b['id']}")
        if b["type"] == "main" and isinstance(b.get("actions"), str):
            b["actions"] = b["actions"].split()
        out.append(b)
    return {"format": "round-record/1", "variant": "boundless", "round": "T-1",
            "shoe_round": shoe_round, "currency": "EUR", "dealer": dealer.split(),
            "player_cards": player_cards.split(), "bets": out}


def main(seat, stake="10.00", **kw):
    return {"type": "main", "seat": seat, "stake": stake, **kw}


def amounts(record, **kw):
    """{bet id: (staked, returned)} as strings-compared Decimals."""
    r = settle(record, **kw)
    return {k: (b.staked, b.returned) for k, b in r.bets.items()}


def D(x):
    return Decimal(x)
