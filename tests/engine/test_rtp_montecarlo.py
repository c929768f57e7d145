"""Monte Carlo cross-check of the exact main-game RTP (issue 9): rounds dealt from real shuffled
shoes by the engine's ``RoundPlay`` and settled by the engine's own ``settle``, must agree with
``tables.engine.rtp.main_game_ev`` within the confidence interval. Plain pytest, no Django.

Strategy: the analyzer does not expose its strategy table nor a basic-strategy EV, so the rounds
are played with the engine's ``basic_strategy`` and compared with the analyzer's OPTIMAL
(composition-dependent) EV; the tolerance adds ``STRATEGY_GAP`` (0.1 point), which covers the
small gap between basic and composition-dependent play for 8 decks (a few hundredths of a point).

Boundless with one main bet per round: one independent hand per round (the analyzer's main game
is the same for the three variants, RULES 5 [decision]), insurance never taken. 80,000 hands
take about 20 s; the seed is fixed.
"""
import math
import random
from decimal import Decimal

from tables.engine import Shoe, ruleset, settle
from tables.engine.play import RoundPlay
from tables.engine.rtp import main_game_ev
from tables.engine.strategy import basic_strategy

HANDS = 80_000
SEED = 20240909
Z = 3.5
STRATEGY_GAP = 0.001


def _play(variant: str, hands: int, seed: int) -> tuple[float, float]:
    """RTP (per original stake) of ``hands`` rounds of one basic-strategy main bet, and its
    standard error (rounds are independent; stakes equal)."""
    rules = ruleset(variant)
    shoe = Shoe(rng=random.Random(seed), penetration=0.75)
    bets = [{"id": "b1", "player": "p1", "type": "main", "stake": "100.00", "insurance": False}]

    def decide(view, legal):
        return basic_strategy(view.cards, view.dealer_up, legal)

    total = total_sq = 0.0
    for i in range(hands):
        record = RoundPlay(rules, shoe, bets, decide=decide, round_id=f"MC-{i}").play()
        shoe.end_round()
        bet = settle(record, rules=rules).bets["b1"]
        net = float((bet.returned - bet.staked) / Decimal(100))
        total += net
        total_sq += net * net
    mean = total / hands
    sd = math.sqrt((total_sq / hands - mean * mean) * hands / (hands - 1))
    return 1 + mean, sd / math.sqrt(hands)


def test_basic_strategy_rounds_agree_with_the_exact_main_game_rtp():
    exact = main_game_ev("boundless").rtp
    observed, se = _play("boundless", HANDS, SEED)
    print(f"\nMonte Carlo {HANDS} hands (basic strategy): RTP {100 * observed:.3f}% +/- {100 * se:.3f}% (1 se); "
          f"exact optimal {100 * exact:.3f}%; z = {(observed - exact) / se:+.2f}")
    assert 0.9 < se * math.sqrt(HANDS) < 1.4  # per-hand sd of blackjack's net (about 1.15)
    assert abs(observed - exact) <= Z * se + STRATEGY_GAP
