"""Cards (RULES 1).

A card is represented by its normalised two-character code ``rank + suit`` (a ``str``), e.g.
``"AS"``, ``"TD"``, ``"QH"``. Ranks ``A 2 3 4 5 6 7 8 9 T J Q K`` (``10`` is accepted on input and
normalised to ``T``); suits ``S H D C``. Plain strings keep records JSON-friendly and replay fast.
"""
from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "SHDC"

#: blackjack value of each rank, ace counted as 1 (RULES 1: A = 1 or 11, J/Q/K = 10)
RANK_VALUE = {r: min(i + 1, 10) for i, r in enumerate(RANKS)}
#: rank order A=1, 2..10, J=11, Q=12, K=13 (used by straights in side bets, RULES 8)
RANK_ORDER = {r: i + 1 for i, r in enumerate(RANKS)}
#: colour by suit: hearts and diamonds red, clubs and spades black (RULES 1)
SUIT_COLOUR = {"H": "red", "D": "red", "C": "black", "S": "black"}

#: every valid input code -> normalised code
_CODES: dict[str, str] = {}
for _r in RANKS:
    for _s in SUITS:
        _CODES[_r + _s] = _r + _s
        if _r == "T":
            _CODES["10" + _s] = "T" + _s
ALL_CARDS = tuple(r + s for s in SUITS for r in RANKS)  # the 52 distinct cards of one deck
CARD_VALUE = {c: RANK_VALUE[c[0]] for c in ALL_CARDS}


def parse_card(code: object) -> str:
    """Normalise a card code (``"AS"``, ``"10D"`` -> ``"TD"``). Case-sensitive, as in the records.

    Raises ``ValueError`` with a short reason for anything that is not a valid code (RULES 1).
    """
    if isinstance(code, str):
        c = _CODES.get(code)
        if c is not None:
            return c
    raise ValueError(f"malformed card code {code!r}")


def card_rank(card: str) -> str:
    """Rank character of a normalised card: one of ``RANKS``."""
    return card[0]


def card_suit(card: str) -> str:
    """Suit character of a normalised card: one of ``SUITS``."""
    return card[1]


def card_value(card: str) -> int:
    """Blackjack value with the ace as 1: A=1, 2-9 face, T/J/Q/K=10 (RULES 1; also the burn count)."""
    return CARD_VALUE[card]


def card_colour(card: str) -> str:
    """``"red"`` (hearts, diamonds) or ``"black"`` (clubs, spades) (RULES 1)."""
    return SUIT_COLOUR[card[1]]


def rank_order(card: str) -> int:
    """Rank order A=1 .. K=13 (RULES 8 straights; Q-K-A handled by the side bet)."""
    return RANK_ORDER[card[0]]
