"""Exact side-bet distributions and RTP (RULES 1 and 8).

Patterns are classified by the engine's own settlement code (``tables.engine.sidebets``), so the
analysis pays exactly what a round pays; only the single highest pattern of the pay table is
paid (RULES 8). Probabilities are exact ``Fraction``s over every draw of distinct cards
(rank + suit) from a shoe of ``decks`` decks (each card ``decks`` times, RULES 1).

Pattern names are the engine's (tables/engine/rules.py). Shorter names are accepted as aliases
(``ALIASES``): ``total_19_20`` -> ``total_19_or_20``, ``straight_678`` -> ``six_seven_eight``,
``trips_777`` -> ``seven_seven_seven``, ``suited_678`` -> ``suited_six_seven_eight``,
``suited_777`` -> ``suited_seven_seven_seven``, ``bust_N`` -> ``bust_N_cards``,
``bust_8_plus`` -> ``bust_8_plus_cards``.
"""
from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from fractions import Fraction
from functools import lru_cache
from itertools import combinations_with_replacement, permutations
from math import factorial

from .. import sidebets as engine_sidebets
from ..cards import ALL_CARDS
from ..rules import DEFAULT_PAY_TABLES, ruleset
from .dealer import bust_card_count_distribution

SIDE_BET_TYPES = ("pair", "pairs", "lucky_trio", "poker_trio", "bust_bonus")
LOSE = "lose"

ALIASES = {
    "total_19_20": "total_19_or_20", "straight_678": "six_seven_eight",
    "trips_777": "seven_seven_seven", "suited_678": "suited_six_seven_eight",
    "suited_777": "suited_seven_seven_seven",
    "bust_3": "bust_3_cards", "bust_4": "bust_4_cards", "bust_5": "bust_5_cards",
    "bust_6": "bust_6_cards", "bust_7": "bust_7_cards", "bust_8_plus": "bust_8_plus_cards",
}


def _falling(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= n - i
    return out


def card_distribution(ncards: int, classify, decks: int = 8, symmetric: bool = False) -> dict:
    """Exact law of ``classify(cards)`` for the first ``ncards`` cards of a shuffled shoe of
    ``decks`` decks (RULES 1). ``cards`` is a tuple of engine card codes (``"AS"``, ``"TD"``) in
    dealing order; ``symmetric=True`` promises that the order does not matter (faster).
    Returns ``{label: Fraction}``."""
    counts: Counter = Counter()
    for combo in combinations_with_replacement(ALL_CARDS, ncards):
        mult = Counter(combo)
        weight = 1
        for m in mult.values():
            weight *= _falling(decks, m)
        if weight == 0:
            continue
        if symmetric:
            perms = factorial(ncards)
            for m in mult.values():
                perms //= factorial(m)
            counts[classify(combo)] += weight * perms
        else:
            for perm in set(permutations(combo)):
                counts[classify(perm)] += weight
    total = _falling(52 * decks, ncards)
    return {label: Fraction(c, total) for label, c in counts.items()}


def normalise_pay_table(table: dict) -> dict:
    """Pattern -> odds with the aliases (``ALIASES``) mapped to the engine's names, odds as Fractions."""
    return {ALIASES.get(k, k): Fraction(str(v)) for k, v in table.items()}


def default_pay_table(bet_type: str, variant: str = "boundless") -> dict:
    """Default pay table of ``bet_type`` in ``variant`` (RULES 8; engine rules.py), or the
    engine's generic default when the variant does not offer that bet."""
    if bet_type not in SIDE_BET_TYPES:
        raise ValueError(f"unknown side bet {bet_type!r}")
    tables = ruleset(variant).pay_tables
    table = tables[bet_type] if bet_type in tables else DEFAULT_PAY_TABLES[bet_type]
    return normalise_pay_table(dict(table))


@lru_cache(maxsize=64)
def _distribution(bet_type: str, table_items: tuple, decks: int) -> tuple:
    table = dict(table_items)
    if bet_type == "bust_bonus":
        dist: dict = defaultdict(Fraction)
        for k, p in bust_card_count_distribution(decks).items():
            name = None if k == "no_bust" else ("bust_8_plus_cards" if k >= 8 else f"bust_{k}_cards")
            dist[name if name in table else LOSE] += p
        return tuple(dist.items())
    rs = dataclasses.replace(ruleset("boundless"), pay_tables={bet_type: table})
    if bet_type == "pair":
        dist = card_distribution(2, lambda c: engine_sidebets.pair(rs, c[0], c[1])[0], decks, True)
    elif bet_type == "pairs":
        if "suited_trips" in table:   # premium: uses the dealer's first card (third card dealt)
            dist = card_distribution(3, lambda c: engine_sidebets.pairs(rs, c[0], c[1], c[2])[0], decks)
        else:
            dist = card_distribution(2, lambda c: engine_sidebets.pairs(rs, c[0], c[1], None)[0], decks, True)
    elif bet_type == "lucky_trio":
        dist = card_distribution(3, lambda c: engine_sidebets.lucky_trio(rs, *c)[0], decks, True)
    elif bet_type == "poker_trio":
        dist = card_distribution(3, lambda c: engine_sidebets.poker_trio(rs, *c)[0], decks, True)
    else:
        raise ValueError(f"unknown side bet {bet_type!r}")
    out: dict = defaultdict(Fraction)
    for label, p in dist.items():
        out[LOSE if label is None else label] += p
    return tuple(out.items())


def side_bet_distribution(bet_type: str, variant: str = "boundless", pay_table: dict | None = None,
                          decks: int = 8) -> dict:
    """Exact probability (Fraction) of every paid pattern of ``bet_type`` and of ``"lose"``
    (RULES 8; only the single highest pattern of the pay table is paid).

    ``pay_table`` (pattern -> odds N of N:1) decides which pattern is the highest; default: the
    variant's table (``pairs`` has ``suited_trips`` in premium only). ``bust_bonus``: the dealer
    always completes (boundless, RULES 3); the players' cards need not be removed (they are
    drawn by decisions on seen cards only, which leaves the dealer's cards the law of a full shoe).
    Patterns of the table with probability 0 are listed with 0.
    """
    table = normalise_pay_table(pay_table) if pay_table is not None else default_pay_table(bet_type, variant)
    dist = dict(_distribution(bet_type, tuple(sorted(table.items())), decks))
    out = {p: dist.get(p, Fraction(0)) for p in sorted(table, key=lambda p: table[p])}
    out[LOSE] = dist.get(LOSE, Fraction(0))
    return out


def side_bet_rtp(distribution: dict, pay_table: dict) -> Fraction:
    """RTP of a bet: sum of P(pattern) * (odds + 1) over paid patterns (RULES 8: N:1 returns
    N + 1 times the stake)."""
    table = normalise_pay_table(pay_table)
    return sum((p * (table[k] + 1) for k, p in distribution.items() if k in table), Fraction(0))
