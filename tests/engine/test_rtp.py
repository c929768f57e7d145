"""Exact RTP analyzer (tables/engine/rtp): published figures, pinned main-game figures.

Plain pytest, no Django. Expensive results are computed once per module (main_game_ev memoises
per rule set and shares the dealer-probability cache), the whole file runs in well under 2 min.

TODO (later issue): Monte Carlo cross-check of main_game_ev against the engine's own settlement
(play rounds with the strategy implied by the analyzer, settle with tables.engine.settling).
"""
import argparse
import json
import sys
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tables.engine.hand import score  # noqa: E402
from tables.engine.rtp import (  # noqa: E402
    AnalysisRules,
    analysis_rules_for,
    card_distribution,
    cli,  # noqa: E402
    dealer_bust_probability,
    dealer_probs,
    dealer_probs_exact,
    from_ruleset,
    full_shoe,
    main_game_ev,
    report,
    side_bet_distribution,
    side_bet_rtp,
)
from tables.engine.rules import ruleset  # noqa: E402

PP = 1e-4  # 0.01 percentage points, as a fraction of the stake

PEEK = AnalysisRules(peek=True)
ENHC_ALL_LOST = AnalysisRules(peek=False, late_bj_loses_all=True)
NO_SURRENDER = AnalysisRules(peek=True, surrender_upcards=frozenset())


# --- published side-bet and dealer figures (Wizard of Odds, 8 decks) ------------------------

def test_perfect_pairs_30_10_5_house_edge_3_37():
    table = {"perfect_pair": 30, "coloured_pair": 10, "mixed_pair": 5}
    dist = side_bet_distribution("pairs", "boundless", table)
    assert abs((1 - side_bet_rtp(dist, table)) - Fraction(337, 10000)) < PP


def test_pair_11_to_1_house_edge_10_36():
    dist = side_bet_distribution("pair", "classic")
    assert dist["pair"] == Fraction(31, 415)          # 8 decks: 31 same-rank cards left of 415
    assert abs((1 - side_bet_rtp(dist, {"pair": 11})) - Fraction(1036, 10000)) < PP


def _hot3(cards):
    """Evolution's Hot 3: 7-7-7 100, suited 21 20, 21 4, 20 2, 19 1 (test-only classifier)."""
    total = score(cards)
    suited = len({c[1] for c in cards}) == 1
    if all(c[0] == "7" for c in cards):
        return 100
    if total == 21:
        return 20 if suited else 4
    return {20: 2, 19: 1}.get(total, -1)


def test_hot3_house_edge_5_40():
    dist = card_distribution(3, _hot3, symmetric=True)
    rtp = sum(p * (odds + 1) for odds, p in dist.items() if odds >= 0)
    assert abs((1 - rtp) - Fraction(540, 10000)) < PP


def test_dealer_busts_28_18_percent_s17_8_decks():
    assert abs(dealer_bust_probability(8) - Fraction(2818, 10000)) < PP


# --- side-bet distributions -----------------------------------------------------------------

@pytest.mark.parametrize("bet, variant", [
    ("pair", "classic"), ("pairs", "premium"), ("pairs", "boundless"), ("lucky_trio", "boundless"),
    ("poker_trio", "boundless"), ("bust_bonus", "boundless")])
def test_distributions_are_exact_and_sum_to_one(bet, variant):
    dist = side_bet_distribution(bet, variant)
    assert all(isinstance(p, Fraction) and p >= 0 for p in dist.values())
    assert sum(dist.values()) == 1


def test_premium_suited_trips_closed_form():
    dist = side_bet_distribution("pairs", "premium")
    # the same card three times: 52 cards x 8*7*6 orders over 416*415*414
    assert dist["suited_trips"] == Fraction(52 * 8 * 7 * 6, 416 * 415 * 414)
    boundless = side_bet_distribution("pairs", "boundless")
    assert "suited_trips" not in boundless
    assert dist["perfect_pair"] + dist["suited_trips"] == boundless["perfect_pair"]


def test_pinned_side_bet_rtps_default_tables():
    got = {(b, v): float(side_bet_rtp(side_bet_distribution(b, v), ruleset(v).pay_tables[b]))
           for b, v in [("pair", "classic"), ("pairs", "premium"), ("pairs", "boundless"),
                        ("lucky_trio", "boundless"), ("poker_trio", "boundless"),
                        ("bust_bonus", "boundless")]}
    want = {("pair", "classic"): 0.896386, ("pairs", "premium"): 0.971154,
            ("pairs", "boundless"): 0.966265, ("lucky_trio", "boundless"): 0.947219,
            ("poker_trio", "boundless"): 0.962961, ("bust_bonus", "boundless"): 0.938157}
    for key, value in want.items():
        assert got[key] == pytest.approx(value, abs=1e-6), key


def test_issue_pattern_names_are_aliases():
    issue = {"bust_3": 1, "bust_4": 2, "bust_5": 9, "bust_6": 50, "bust_7": 100, "bust_8_plus": 250}
    dist = side_bet_distribution("bust_bonus", "boundless", issue)
    assert side_bet_rtp(dist, issue) == side_bet_rtp(
        side_bet_distribution("bust_bonus", "boundless"), ruleset("boundless").pay_tables["bust_bonus"])
    lucky = {"total_19_20": 2, "total_21": 3, "suited_21": 10, "straight_678": 30,
             "trips_777": 50, "suited_678": 100, "suited_777": 200}
    assert side_bet_rtp(side_bet_distribution("lucky_trio", "boundless", lucky), lucky) == side_bet_rtp(
        side_bet_distribution("lucky_trio", "boundless"), ruleset("boundless").pay_tables["lucky_trio"])


# --- dealer probabilities -------------------------------------------------------------------

@pytest.mark.parametrize("up, removed", [(0, (9, 9)), (1, (3, 5, 5)), (5, (0, 9)), (9, (0, 0, 4, 6))])
def test_fast_dealer_equals_exact_recursion(up, removed):
    shoe = list(full_shoe(8))
    for r in (up,) + removed:
        shoe[r] -= 1
    fast = dealer_probs(tuple(shoe), up)
    exact = dealer_probs_exact(tuple(shoe), up)
    assert sum(exact) == 1
    assert max(abs(a - float(b)) for a, b in zip(fast, exact)) < 1e-14


# --- main game --------------------------------------------------------------------------------

def test_variant_rules_follow_rules_md():
    classic = analysis_rules_for("classic")
    assert not classic.peek and not classic.late_bj_loses_all
    assert analysis_rules_for("premium").peek and analysis_rules_for("boundless").peek
    for v in ("classic", "premium", "boundless"):
        assert analysis_rules_for(v) == from_ruleset(ruleset(v))
        assert analysis_rules_for(v).surrender_upcards == frozenset(range(2, 10))
        assert analysis_rules_for(v).das


def test_main_game_peek_pinned():
    # RULES 5: "an exact analysis of these rules gives about 99.52%"
    rtp = main_game_ev(PEEK).rtp
    assert rtp == pytest.approx(0.9951687, abs=1e-6)
    assert abs(rtp - 0.9952) < PP


def test_no_hole_card_original_stake_only_equals_peek():
    # RULES 5 [decision]: classic loses only the original stake on a late BJ -> equivalent to peek
    assert main_game_ev("classic").rtp == pytest.approx(main_game_ev(PEEK).rtp, abs=1e-12)
    assert main_game_ev(ruleset("premium")).rtp == pytest.approx(main_game_ev(PEEK).rtp, abs=1e-12)
    assert main_game_ev("boundless").rtp == pytest.approx(main_game_ev(PEEK).rtp, abs=1e-12)


def test_no_hole_card_all_lost_costs_0_11_points():
    rtp = main_game_ev(ENHC_ALL_LOST).rtp
    assert rtp == pytest.approx(0.9940709, abs=1e-6)
    assert abs(rtp - 0.9941) < PP                     # RULES 5: "about 99.41% if everything lost"
    assert abs((main_game_ev(PEEK).rtp - rtp) - 0.0011) < PP


def test_surrender_2_to_9_is_worth_almost_nothing():
    gain = main_game_ev(PEEK).rtp - main_game_ev(NO_SURRENDER).rtp
    assert 0 < gain < PP
    assert gain == pytest.approx(0.0000265, abs=1e-6)


def test_main_game_first_actions():
    freq = main_game_ev(PEEK).action_frequency
    assert sum(freq.values()) == pytest.approx(1, abs=1e-12)
    assert freq["blackjack"] == pytest.approx(float(Fraction(2 * 32 * 128, 416 * 415)), rel=1e-12)


# --- report and CLI ---------------------------------------------------------------------------

def test_report_and_cli(capsys):
    rep = report("boundless")
    assert set(rep["side_bets"]) == {"pairs", "lucky_trio", "poker_trio", "bust_bonus"}
    assert rep["main"]["rtp"] == pytest.approx(main_game_ev(PEEK).rtp, abs=1e-12)
    assert rep["published_rtp"] == pytest.approx(0.9946)
    for info in rep["side_bets"].values():
        assert sum(info["outcomes"].values()) == pytest.approx(1, abs=1e-12)
    parser = argparse.ArgumentParser()
    cli.add_subparser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["rtp", "--variant", "premium", "--json"])
    assert args.func(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["side_bets"]) == {"pairs"}
    args = parser.parse_args(["rtp", "--variant", "classic"])
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "main game RTP 99.517%" in text and "pair: RTP 89.639%" in text


# --- split: 2 x one hand equals the two hands played in turn from the same shoe ---------------

def _brute_split(rules, shoe0, up, r):
    """EV of splitting r vs up played literally: hand 1 draws and plays, then hand 2, then the
    dealer from what is left (exact dealer recursion). Each hand decides like the analyzer (on
    its own cards), so this checks the optional-stopping shortcut and the bookkeeping."""
    from tables.engine.rtp.dealer import hand_total
    from tables.engine.rtp.maingame import ZERO, _add, _Context

    ctx = _Context(rules, shoe0, up, _add(ZERO, r))
    L = 1 if rules.bj_loses_all_stakes else 0
    memo = {}

    def settle(hands, shoe):
        probs = memo.get(shoe)
        if probs is None:
            probs = memo[shoe] = dealer_probs(shoe, up)  # checked against the exact recursion above
        ev = 0.0
        for i, p in enumerate(probs):
            for total, stake in hands:
                if i == 6:
                    ev += float(p) * (-stake if L else 0.0)
                elif total > 21:
                    ev += float(p) * -stake
                else:
                    d = 17 + i if i < 5 else 0
                    ev += float(p) * stake * ((total > d) - (total < d))
        if not L:
            ev -= float(probs[6])                  # original stake only, once
        return ev

    def play(hand, shoe, first):
        """Yield (probability, (total, stake), shoe) for each way the hand can end (shoes are small tuples)."""
        total, _ = hand_total(hand)
        if sum(hand) == 1:                         # deal the second card
            n = sum(shoe)
            for c in range(10):
                if shoe[c]:
                    for p, res, s in play(_add(hand, c), shoe[:c] + (shoe[c] - 1,) + shoe[c + 1:], True):
                        yield shoe[c] / n * p, res, s
            return
        if r == 0 and not rules.hit_split_aces or total >= 21:
            yield 1.0, (total, 1), shoe
            return
        opts = {"stand": ctx.stand(hand), "hit": ctx.hit(hand)}
        if first and rules.das:
            opts["double"] = ctx.double(hand)
        act = max(opts, key=opts.get)
        if act == "stand":
            yield 1.0, (total, 1), shoe
            return
        n = sum(shoe)
        for c in range(10):
            if not shoe[c]:
                continue
            nxt, s2 = _add(hand, c), shoe[:c] + (shoe[c] - 1,) + shoe[c + 1:]
            if act == "double":
                yield shoe[c] / n, (hand_total(nxt)[0], 2), s2
            else:
                for p, res, s in play(nxt, s2, False):
                    yield shoe[c] / n * p, res, s

    shoe = list(shoe0)
    shoe[up] -= 1
    shoe[r] -= 2
    one = _add(ZERO, r)
    ev = 0.0
    for p1, h1, s1 in play(one, tuple(shoe), True):
        for p2, h2, s2 in play(one, s1, True):
            ev += p1 * p2 * settle([h1, h2], s2)
    return ev


@pytest.mark.parametrize("rules", [PEEK, ENHC_ALL_LOST], ids=["peek", "enhc_all_lost"])
@pytest.mark.parametrize("up, r", [(5, 7), (9, 8), (0, 0), (6, 1)])
def test_split_shortcut_matches_literal_play(rules, up, r):
    from tables.engine.rtp.maingame import _split_value
    shoe0 = (2, 3, 1, 1, 1, 1, 2, 3, 3, 6)          # a tiny shoe keeps the literal play small
    L = 1 if rules.bj_loses_all_stakes else 0
    shoe = list(shoe0)
    shoe[up] -= 1
    shoe[r] -= 2
    from tables.engine.rtp.dealer import dealer_blackjack
    fast = _split_value(rules, shoe0, up, r) - (1 - L) * dealer_blackjack(tuple(shoe), up)
    assert fast == pytest.approx(_brute_split(rules, shoe0, up, r), abs=1e-12)
