"""Exact expected value of the main bet under the best composition-dependent strategy
(RULES 2, 3, 4, 5).

For every initial deal (two player cards, dealer up card) drawn from a full shoe, the best of
stand, hit, double, split and surrender is taken, each valued exactly over the remaining shoe
(no simulation). Insurance is never taken.

Method. Hands are rank-count tuples. ``stand`` uses the dealer's outcome probabilities for the
shoe minus the up card and every player card; ``hit`` averages the best value of the hand with
each next card; ``double`` is twice the stand value after one card. Values are memoised on the
hand composition (recursion, so the highest totals are filled first). The dealer's probabilities
of every shoe an up card's analysis meets (``_reached``) are computed together beforehand
(``dealer.dealer_probs_many``).

Dealer blackjack. The hole card is treated as drawn after the player's cards (exchangeable), so
every value is an unconditional expectation that includes the dealer-blackjack outcome:
* peek, or no hole card with "original stake only" (RULES 5 classic): a dealer blackjack costs
  exactly the original stake whatever the player did, so that term is added once per deal and
  the decisions maximise the rest (martingale: its expectation does not depend on the action).
* no hole card with "all bets lost": each final hand loses its whole stake on a dealer BJ.

Split (one split, no resplit, RULES 4): each split hand is played optimally on its own cards
(with the other pair card removed). By optional stopping on the exchangeable shoe, the second
hand's cards do not change the law of the dealer's cards seen by the first hand, and the two
hands are symmetric, so split EV = 2 x EV of one split hand: exact for that strategy (it ignores,
when playing the second hand, the cards the first one drew: the "CDP1" strategy, which differs
negligibly from full composition-dependent post-split play).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cache
from operator import add, sub

from .dealer import ACE, BJ, BUST, TEN, dealer_blackjack, dealer_probs, dealer_probs_many, full_shoe, hand_total
from .params import AnalysisRules, coerce

ZERO = (0,) * 10

#: main_game_ev results by AnalysisRules
_RESULTS: dict = {}


def clear_caches() -> None:
    """Forget memoised results (for benchmarks)."""
    _RESULTS.clear()


def _add(t: tuple, r: int) -> tuple:
    return t[:r] + (t[r] + 1,) + t[r + 1:]


def _sub(a: tuple, b: tuple) -> tuple:
    return tuple(map(sub, a, b))


@cache
def _next_hands(hand: tuple) -> tuple:
    """``hand`` with one more card of each rank, ace first."""
    return tuple(_add(hand, r) for r in range(10))


@dataclass(frozen=True)
class MainGameResult:
    """Result of ``main_game_ev`` (RULES 5).

    ev: expected return per unit of original stake, minus the stake (e.g. -0.0048).
    rtp: 1 + ev (e.g. 0.9952).
    by_upcard: ev conditioned on each dealer up card ``{"A": ..., "2": ..., "T": ...}``.
    action_frequency: probability that the best first action is each action.
    """

    rules: AnalysisRules
    ev: float
    rtp: float
    by_upcard: dict
    action_frequency: dict

    def as_dict(self) -> dict:
        return {"ev": self.ev, "rtp": self.rtp, "by_upcard": dict(self.by_upcard),
                "action_frequency": dict(self.action_frequency)}


class _Context:
    """Values of hands for one up card and one set of extra removed cards (the other split card).
    ``dealer``: ``{shoe: dealer outcome probabilities}`` computed beforehand (``dealer_probs_many``);
    a shoe missing from it is computed on its own (``dealer_probs``) and kept there."""

    def __init__(self, rules: AnalysisRules, shoe0: tuple, up: int, removed: tuple, dealer: dict | None = None):
        self.rules = rules
        self.up = up
        self.base = _sub(shoe0, _add(removed, up))   # shoe before the hand's own cards
        self.h17 = rules.dealer_hits_soft_17
        self.L = 1.0 if rules.bj_loses_all_stakes else 0.0
        self.dealer = {} if dealer is None else dealer
        self.best_memo: dict = {}
        self.stand_memo: dict = {}

    def shoe(self, hand: tuple) -> tuple:
        return tuple(map(sub, self.base, hand))

    def pbj(self, shoe: tuple) -> float:
        return dealer_blackjack(shoe, self.up)

    def stand(self, hand: tuple) -> float:
        """Value of standing with stake 1 (non-BJ dealer outcomes, minus L * P(BJ))."""
        v = self.stand_memo.get(hand)
        if v is not None:
            return v
        shoe = self.shoe(hand)
        total, _ = hand_total(hand)
        if total > 21:
            self.stand_memo[hand] = v = -1.0 + (1.0 - self.L) * self.pbj(shoe)
            return v
        p = self.dealer.get(shoe)
        if p is None:
            p = self.dealer[shoe] = dealer_probs(shoe, self.up, self.h17)
        if total < 17:
            pb = p[BUST]
            pbj = self.pbj(shoe)
            v = pb - (1.0 - pb - pbj) - self.L * pbj
        else:
            k = total - 17
            v = p[BUST] + sum(p[:k]) - sum(p[k + 1:5]) - self.L * p[BJ]
        self.stand_memo[hand] = v
        return v

    def hit(self, hand: tuple) -> float:
        shoe = self.shoe(hand)
        best = self.best_after_hit
        acc = 0.0
        for count, nxt in zip(shoe, _next_hands(hand)):
            if count:
                acc += count * best(nxt)
        return acc / sum(shoe)

    def best_after_hit(self, hand: tuple) -> float:
        """Best of stand / hit for a hand that may no longer double (RULES 4)."""
        v = self.best_memo.get(hand)
        if v is not None:
            return v
        total, _ = hand_total(hand)
        if total >= 21:
            v = self.stand(hand)
        else:
            v = max(self.stand(hand), self.hit(hand))
        self.best_memo[hand] = v
        return v

    def double(self, hand: tuple) -> float:
        shoe = self.shoe(hand)
        acc = 0.0
        for count, nxt in zip(shoe, _next_hands(hand)):
            if count:
                acc += count * self.stand(nxt)
        return 2.0 * acc / sum(shoe)

    def options(self, hand: tuple, can_double: bool) -> dict:
        """Values of the actions on a two-card hand (stand, hit, double)."""
        total, _ = hand_total(hand)
        out = {"stand": self.stand(hand)}
        if total < 21:
            out["hit"] = self.hit(hand)
            if can_double:
                out["double"] = self.double(hand)
        return out


def _split_value(rules: AnalysisRules, shoe0: tuple, up: int, r: int, dealer: dict | None = None) -> float:
    """EV of splitting a pair of rank ``r`` (2 x one split hand), BJ term per ``ctx.L``;
    ``dealer`` as ``_Context``'s."""
    one = _add(ZERO, r)
    ctx = _Context(rules, shoe0, up, one, dealer)       # the other pair card is removed
    shoe = ctx.shoe(one)
    n = sum(shoe)
    acc = 0.0
    for c in range(10):
        if not shoe[c]:
            continue
        hand = _add(one, c)
        if r == ACE and not rules.hit_split_aces:
            v = ctx.stand(hand)                 # one card each, no BJ (RULES 2, 4)
        else:
            v = max(ctx.options(hand, rules.das).values())
        acc += shoe[c] * v
    return 2.0 * acc / n


def _deal_options(rules: AnalysisRules, shoe0: tuple, up: int, hand: tuple, ctx: _Context) -> dict:
    """Values of every legal first action on the initial hand (excluding the BJ constant)."""
    out = ctx.options(hand, True)
    pair = [r for r in range(10) if hand[r] == 2]
    if pair and rules.split:
        out["split"] = _split_value(rules, shoe0, up, pair[0], ctx.dealer)
    if (up + 1) in rules.surrender_upcards:
        pbj = ctx.pbj(ctx.shoe(hand))
        out["surrender"] = -0.5 * (1.0 - pbj) - ctx.L * pbj
    return out


_RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T")


def main_game_ev(params="classic") -> MainGameResult:
    """Exact main-bet EV under the best composition-dependent strategy (RULES 2, 3, 4, 5).

    ``params``: an ``AnalysisRules``, a variant name, or the engine's ``RuleSet``. Weights the
    best first action over every initial deal (two player cards + up card) from a full shoe.
    Results are memoised per rule set, rule sets that value every hand alike sharing one
    (``clear_caches`` forgets them).
    """
    rules = coerce(params)
    alike = _alike(rules)
    cached = _RESULTS.get(alike)
    if cached is None:
        cached = _RESULTS[alike] = _main_game_ev(alike)
    return cached if cached.rules == rules else dataclasses.replace(cached, rules=rules)


def _alike(rules: AnalysisRules) -> AnalysisRules:
    """The rule set that values every hand as ``rules`` does: without a hole card, a dealer
    blackjack that takes the original stake only costs what a peek does (see the module
    docstring), so such rules are the peek's."""
    if rules.peek or rules.bj_loses_all_stakes:
        return rules
    return dataclasses.replace(rules, peek=True, late_bj_loses_all=False)


def _reached(rules: AnalysisRules) -> list:
    """The cards out of the shoe (rank counts, the up card aside) in every position whose stand
    value the analysis of one up card needs: each initial hand but a blackjack, each split hand
    with the pair's other card, and every hand these reach by taking cards while under 21, when
    their total is 21 or less (a bust needs no dealer probabilities)."""
    starts = [(ZERO, _add(_add(ZERO, a), b)) for a in range(10) for b in range(a, 10) if (a, b) != (ACE, TEN)]
    if rules.split:
        starts += [(_add(ZERO, r), _add(_add(ZERO, r), c)) for r in range(10) for c in range(10)]
    seen, reached = set(), set()
    todo = list(starts)
    while todo:
        removed, hand = position = todo.pop()
        if position in seen:
            continue
        seen.add(position)
        reached.add(tuple(map(add, removed, hand)))
        split_aces = removed[ACE] == 1 and not rules.hit_split_aces  # one card each (RULES 4)
        if not split_aces and hand_total(hand)[0] < 21:
            todo += [(removed, nxt) for nxt in _next_hands(hand) if hand_total(nxt)[0] <= 21]
    return sorted(reached)


def _main_game_ev(rules: AnalysisRules) -> MainGameResult:
    shoe0 = full_shoe(rules.decks)
    total0 = sum(shoe0)
    bj_pay = float(rules.blackjack_pays)
    ev = 0.0
    by_up = {}
    freq: dict = {}
    reached = _reached(rules)
    for up in range(10):
        p_up = shoe0[up] / total0
        after_up = _sub(shoe0, _add(ZERO, up))
        n1 = total0 - 1
        dealer = dict(zip((_sub(after_up, z) for z in reached),
                          dealer_probs_many(after_up, up, reached, rules.dealer_hits_soft_17)))
        ctx = _Context(rules, shoe0, up, ZERO, dealer)
        ev_up = 0.0
        for a in range(10):
            for b in range(a, 10):
                pa = after_up[a] / n1
                rest_b = after_up[b] - (1 if a == b else 0)
                p = pa * rest_b / (n1 - 1) * (1 if a == b else 2)
                if p == 0:
                    continue
                hand = _add(_add(ZERO, a), b)
                shoe = ctx.shoe(hand)
                pbj = ctx.pbj(shoe)
                if a == ACE and b == TEN:
                    v = bj_pay * (1.0 - pbj)
                    best = "blackjack"
                else:
                    opts = _deal_options(rules, shoe0, up, hand, ctx)
                    best = max(opts, key=opts.get)
                    v = opts[best] - (1.0 - ctx.L) * pbj
                ev_up += p * v
                freq[best] = freq.get(best, 0.0) + p_up * p
        by_up[_RANK_NAMES[up]] = ev_up
        ev += p_up * ev_up
    return MainGameResult(rules=rules, ev=ev, rtp=1.0 + ev, by_upcard=by_up, action_frequency=freq)
