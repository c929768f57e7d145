"""Side-bet patterns (RULES 8). Each function returns ``(pattern, odds)`` for the
single highest-paying pattern (by the table's odds, so operator overrides are honoured), or
``(None, None)`` when the bet loses. Cards are normalised codes."""
from __future__ import annotations

from decimal import Decimal

from .cards import CARD_VALUE, RANK_ORDER, SUIT_COLOUR
from .hand import score
from .rules import RuleSet


def _best(rules: RuleSet, bet_type: str, matches: list) -> tuple:
    table = rules.pay_tables[bet_type]
    best = None
    for p in matches:
        if p in table and (best is None or table[p] > table[best]):
            best = p
    return (best, table[best]) if best else (None, None)


def pair(rules: RuleSet, c1: str, c2: str) -> tuple[str | None, Decimal | None]:
    """Classic ``pair``: the seat's first two cards have the same RANK -> ``"pair"`` 11:1."""
    return _best(rules, "pair", ["pair"] if c1[0] == c2[0] else [])


def pairs(rules: RuleSet, c1: str, c2: str, dealer_up: str | None) -> tuple[str | None, Decimal | None]:
    """``pairs`` (premium per seat; boundless on c1, c2). Same rank required:
    ``mixed_pair`` (different colours), ``coloured_pair`` (same colour, different suits),
    ``perfect_pair`` (same suit), ``suited_trips`` (premium only: both cards and the dealer's
    first card of the same rank and suit). Highest only."""
    if c1[0] != c2[0]:
        return None, None
    if c1[1] == c2[1]:
        m = ["perfect_pair"]
        if dealer_up == c1:
            m.append("suited_trips")
    elif SUIT_COLOUR[c1[1]] == SUIT_COLOUR[c2[1]]:
        m = ["coloured_pair"]
    else:
        m = ["mixed_pair"]
    return _best(rules, "pairs", m)


def bust_bonus(rules: RuleSet, dealer: tuple) -> tuple[str | None, Decimal | None]:
    """``bust_bonus``: wins if the dealer busts, by number of dealer cards: 3 -> ``bust_3_cards``
    ... 7 -> ``bust_7_cards``, 8 or more -> ``bust_8_plus_cards``."""
    if score(dealer) <= 21:
        return None, None
    n = len(dealer)
    return _best(rules, "bust_bonus", ["bust_8_plus_cards" if n >= 8 else f"bust_{n}_cards"])


def _trio(c1: str, c2: str, d1: str):
    cards = (c1, c2, d1)
    suited = c1[1] == c2[1] == d1[1]
    orders = sorted(RANK_ORDER[c[0]] for c in cards)
    values = sorted(CARD_VALUE[c] for c in cards)
    return cards, suited, orders, values


def lucky_trio(rules: RuleSet, c1: str, c2: str, d1: str) -> tuple[str | None, Decimal | None]:
    """``lucky_trio`` on the player's two cards + the dealer's first card (RULES 8): total 19/20,
    21 (suited or not), 6-7-8 and 7-7-7 (suited or not). Total scored as in RULES 2."""
    cards, suited, orders, _ = _trio(c1, c2, d1)
    total = score(cards)
    m = []
    if total in (19, 20):
        m.append("total_19_or_20")
    if total == 21:
        m.append("suited_21" if suited else "total_21")
    if orders == [6, 7, 8]:
        m.append("suited_six_seven_eight" if suited else "six_seven_eight")
    if orders == [7, 7, 7]:
        m.append("suited_seven_seven_seven" if suited else "seven_seven_seven")
    return _best(rules, "lucky_trio", m)


def poker_trio(rules: RuleSet, c1: str, c2: str, d1: str) -> tuple[str | None, Decimal | None]:
    """``poker_trio``: the same three cards as a poker hand: ``flush``, ``straight`` (not all one
    suit; A-2-3 and Q-K-A count, K-A-2 does not), ``three_of_a_kind`` (not all one suit),
    ``straight_flush``, ``suited_trips`` (same rank and suit). Highest only."""
    _, suited, o, _ = _trio(c1, c2, d1)
    straight = (o[0] + 1 == o[1] and o[1] + 1 == o[2]) or o == [1, 12, 13]
    trips = o[0] == o[2]
    m = []
    if suited:
        m.append("flush")
        if straight:
            m.append("straight_flush")
        if trips:
            m.append("suited_trips")
    else:
        if straight:
            m.append("straight")
        if trips:
            m.append("three_of_a_kind")
    return _best(rules, "poker_trio", m)
