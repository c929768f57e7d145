"""Live dealing (play.RoundPlay / deal_round) and basic strategy."""
import random

import pytest

from tables.engine import Shoe, ruleset, settle
from tables.engine.play import RoundPlay, deal_round
from tables.engine.strategy import basic_strategy

ALL = frozenset({"hit", "stand", "double", "split", "surrender"})


@pytest.mark.parametrize("cards,up,legal,expected", [
    ("TS 6D", "9H", ALL, "surrender"), ("TS 6D", "9H", ALL - {"surrender"}, "hit"),
    ("TS 6D", "6H", ALL, "stand"), ("5S 6D", "TH", ALL, "double"), ("5S 6D", "AH", ALL, "hit"),
    ("8S 8D", "TH", ALL, "split"), ("AS AD", "6H", ALL, "split"), ("TS TD", "6H", ALL, "stand"),
    ("AS 7D", "4H", ALL, "double"), ("AS 7D", "4H", ALL - {"double"}, "stand"), ("AS 7D", "9H", ALL, "hit"),
    ("9S 9D", "7H", ALL, "stand"), ("2S 3D 4C", "5H", frozenset({"hit", "stand"}), "hit"),
    ("TS 2D", "4H", ALL, "stand"), ("TS 2D", "3H", ALL, "hit"),
])
def test_basic_strategy_cells(cards, up, legal, expected):
    assert basic_strategy(cards.split(), up, legal) == expected
    assert basic_strategy(cards.split(), up, frozenset()) is None


def test_round_play_asks_decide_with_legal_actions_and_records_a_valid_round():
    seen = []

    def decide(view, legal):
        seen.append((view.seat, legal))
        return "stand" if "stand" in legal else None
    rules = ruleset("classic")
    bets = [{"id": "m1", "player": "p1", "type": "main", "seat": 1, "stake": "10.00"},
            {"id": "m5", "player": "p5", "type": "main", "seat": 5, "stake": "10.00"}]
    rec = RoundPlay(rules, Shoe(rng=random.Random(3)), bets, decide=decide).play()
    assert rec["shoe_round"] == 1 and set(rec["seats"]) == {"1", "5"}
    assert [s for s, _ in seen] == sorted(s for s, _ in seen)  # seat order
    settle(rec)


def test_round_play_timeout_is_auto_play_and_fallback_is_recorded():
    rules = ruleset("premium")
    bets = [{"id": "m1", "player": "p1", "type": "main", "seat": 1, "stake": "10.00"}]
    for seed in range(200):
        rec = RoundPlay(rules, Shoe(rng=random.Random(seed)), bets, decide=lambda view, legal: None).play()
        assert rec["seats"]["1"]["actions"] == []
        r = settle(rec)
        assert all(by == "auto" for h in r.seats[1] for _, by in h.decisions)
        # always wants to double, never can afford it: premium falls back to hit
        rec = RoundPlay(rules, Shoe(rng=random.Random(seed)), bets,
                        decide=lambda view, legal: "double" if "double" in legal else None,
                        can_afford=lambda v, a: False).play()
        assert "double" not in rec["seats"]["1"]["actions"]
        settle(rec)


@pytest.mark.parametrize("variant", ["classic", "premium", "boundless"])
def test_deal_round_offers_every_bet_type(variant):
    types = set()
    for seed in range(300):
        rec = deal_round(variant, random.Random(seed))
        settle(rec)
        types |= {b["type"] for b in rec["bets"]}
    assert types == set(ruleset(variant).bet_types)


def test_boundless_players_decide_side_by_side_one_afford_batch_per_card():
    """Every player's double or split on the same cards comes in one ``can_afford_all`` call (a
    studio's one batch per card of the shared hand), not one call per player; refused ones play
    the fallback and the record settles."""
    rules = ruleset("boundless")
    bets = [{"id": f"m{p}", "player": f"p{p}", "type": "main", "stake": "10.00"} for p in range(200)]
    for seed in range(20):
        calls, rng = [], random.Random(seed)

        def can_afford_all(asks, rng=rng, calls=calls):
            calls.append(asks)
            return [rng.random() < 0.5 for _ in asks]
        rec = RoundPlay(rules, Shoe(rng=random.Random(seed)), bets,
                        decide=lambda view, legal: "double" if "double" in legal else
                        ("split" if "split" in legal else "stand"),
                        can_afford_all=can_afford_all).play()
        assert len(calls) <= len(rec["player_cards"]) - 1
        for asks in calls:
            assert len({view.cards for view, _ in asks}) == 1 and len(asks) == len({v.bet_id for v, _ in asks})
        assert all(len(asks) > 1 for asks in calls)
        settle(rec)
    assert calls
