"""Hypothesis properties over random legal rounds (``play.deal_round``) of each variant."""
import random
from collections import Counter
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from tables.engine import auto_play, ruleset, score, settle, settle_naive
from tables.engine.cards import ALL_CARDS
from tables.engine.money import round_down
from tables.engine.play import deal_round

VARIANTS = st.sampled_from(["classic", "premium", "boundless"])
SEEDS = st.integers(min_value=0, max_value=2**32)


def _cards(record):
    out = list(record["dealer"])
    if "player_cards" in record:
        out += record["player_cards"]
    else:
        for s in record["seats"].values():
            out += s["cards"]
    return out


@settings(max_examples=300, deadline=None)
@given(VARIANTS, SEEDS)
def test_random_legal_rounds_settle_deterministically_within_bounds(variant, seed):
    record = deal_round(variant, random.Random(seed))
    assert max(Counter(_cards(record)).values()) <= 8
    r1, r2 = settle(record), settle(record)
    assert r1.to_dict() == r2.to_dict()  # replay is deterministic
    rules = ruleset(variant)
    for bet in r1.bets.values():
        assert bet.returned >= 0 and bet.staked >= bet.stake > 0
        if bet.type in ("main", "behind"):
            ins = bet.insurance.stake if bet.insurance else Decimal(0)
            ins_ret = bet.insurance.returned if bet.insurance else Decimal(0)
            assert ins_ret <= ins * rules.max_multiple("insurance")
            assert bet.returned - ins_ret <= (bet.staked - ins) * rules.max_multiple("main")
            assert bet.staked == bet.stake + sum(bet.extras.values(), Decimal(0))
            assert sum(h.stake for h in bet.hands) + ins == bet.staked
            assert sum(h.returned for h in bet.hands) + ins_ret == bet.returned
            if bet.outcome == "surrender":  # RULES 4: exactly half, rounded down
                assert bet.returned - ins_ret == round_down(bet.stake / 2, 2)
        else:
            assert bet.returned <= bet.staked * rules.max_multiple(bet.type)
            assert (bet.pattern is None) == (bet.returned == 0)
    # a void refunds exactly what was staked
    refunds = r1.void_refunds()
    assert refunds == {k: b.staked for k, b in r1.bets.items()}
    assert sum(refunds.values(), Decimal(0)) == r1.total_staked


@settings(max_examples=150, deadline=None)
@given(SEEDS, st.integers(min_value=1, max_value=60))
def test_grouped_boundless_equals_naive_per_player_replay(seed, players):
    record = deal_round("boundless", random.Random(seed), players=players)
    g, n = settle(record), settle_naive(record)
    assert len(n.paths) == sum(1 for b in n.bets.values() if b.type == "main")
    for k, b in n.bets.items():
        gb = g.bets[k]
        assert (gb.staked, gb.returned, gb.outcome, gb.extras) == (b.staked, b.returned, b.outcome, b.extras)
        assert [h.to_dict() for h in gb.hands] == [h.to_dict() for h in b.hands]


CARD = st.sampled_from(ALL_CARDS)


@given(st.lists(CARD, min_size=2, max_size=2), st.lists(CARD, min_size=12, max_size=12))
def test_auto_play_never_busts(initial, stream):
    """RULES 4: auto-play hits while 11 or less (ace as 11 unless it busts); it never busts."""
    it = iter(stream)
    out = auto_play(initial, lambda: next(it))
    s = score(out)
    assert 12 <= s <= 21


@settings(max_examples=200, deadline=None)
@given(VARIANTS, SEEDS)
def test_timed_out_hands_never_bust_after_auto(variant, seed):
    """Hands completed by auto-play (every decision auto) never bust (RULES 4)."""
    r = settle(deal_round(variant, random.Random(seed)))
    hands = ([h for hs in r.seats.values() for h in hs] if r.seats is not None
             else [h for p in r.paths for h in p["hands"]])
    for h in hands:
        if h.decisions and all(by == "auto" for _, by in h.decisions):
            assert h.score <= 21
