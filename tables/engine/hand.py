"""Hand scoring (RULES 2). Cards are normalised codes (see ``cards``)."""
from __future__ import annotations

from collections.abc import Sequence

from .cards import CARD_VALUE


def hand_value(cards: Sequence[str]) -> tuple[int, bool]:
    """Return ``(score, soft)``: sum with one ace counted as 11 when that does not exceed 21
    (the hand is then *soft*), otherwise all aces as 1 (RULES 2). ``A+9`` -> ``(20, True)``."""
    total = 0
    ace = False
    for c in cards:
        v = CARD_VALUE[c]
        total += v
        if v == 1:
            ace = True
    if ace and total <= 11:
        return total + 10, True
    return total, False


def score(cards: Sequence[str]) -> int:
    """Hand score (RULES 2): ``A+A+9`` -> 21, ``A+9+5`` -> 15."""
    total = 0
    ace = False
    for c in cards:
        v = CARD_VALUE[c]
        total += v
        if v == 1:
            ace = True
    return total + 10 if ace and total <= 11 else total


def is_soft(cards: Sequence[str]) -> bool:
    """True when an ace is counted as 11 in ``score`` (RULES 2)."""
    return hand_value(cards)[1]


def is_bust(cards: Sequence[str]) -> bool:
    """Score over 21 (RULES 2)."""
    return score(cards) > 21


def is_blackjack(cards: Sequence[str], split: bool = False) -> bool:
    """Exactly two cards, an ace and a 10-value card, in a hand that is NOT the result of a split
    (RULES 2: a split A+10 is a plain 21)."""
    if split or len(cards) != 2:
        return False
    a, b = CARD_VALUE[cards[0]], CARD_VALUE[cards[1]]
    return (a == 1 and b == 10) or (a == 10 and b == 1)
