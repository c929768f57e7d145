"""Basic strategy for S17, 8 decks, double after split, no resplit, late surrender vs 2-9 only
(the surrender the variants allow). Used by the simulator and the benchmark; insurance never.
Source: the standard 4-8 deck S17 DAS chart."""
from __future__ import annotations

from collections.abc import Collection, Sequence

from .cards import CARD_VALUE
from .hand import hand_value


def _up(dealer_up: str) -> int:
    v = CARD_VALUE[dealer_up]
    return 11 if v == 1 else v


def _pair_split(v: int, up: int) -> bool:
    if v == 1 or v == 8:
        return True
    if v == 10 or v == 5:
        return False
    if v == 9:
        return up in (2, 3, 4, 5, 6, 8, 9)
    if v == 7 or v in (2, 3):
        return 2 <= up <= 7
    if v == 6:
        return 2 <= up <= 6
    if v == 4:
        return up in (5, 6)
    return False


def _soft(total: int, up: int) -> str:
    """'D' double else hit, 'Ds' double else stand, 'H', 'S'."""
    if total >= 19:
        return "S"
    if total == 18:
        return "Ds" if 3 <= up <= 6 else ("S" if up in (2, 7, 8) else "H")
    if total == 17:
        return "D" if 3 <= up <= 6 else "H"
    if total in (15, 16):
        return "D" if 4 <= up <= 6 else "H"
    return "D" if up in (5, 6) else "H"  # 13, 14


def _hard(total: int, up: int) -> str:
    if total >= 17:
        return "S"
    if total >= 13:
        return "S" if up <= 6 else "H"
    if total == 12:
        return "S" if 4 <= up <= 6 else "H"
    if total == 11:
        return "D" if up <= 10 else "H"
    if total == 10:
        return "D" if up <= 9 else "H"
    if total == 9:
        return "D" if 3 <= up <= 6 else "H"
    return "H"


def basic_strategy(cards: Sequence[str], dealer_up: str, legal: Collection[str]) -> str | None:
    """Basic-strategy action for a hand, restricted to ``legal`` (from ``legal.legal_actions``).

    ``cards``: the hand's cards; ``dealer_up``: the dealer's first card. Returns one of
    ``legal`` or None when ``legal`` is empty.
    """
    if not legal:
        return None
    up = _up(dealer_up)
    total, soft = hand_value(cards)
    if ("split" in legal and len(cards) == 2 and CARD_VALUE[cards[0]] == CARD_VALUE[cards[1]]
            and _pair_split(CARD_VALUE[cards[0]], up)):
        return "split"
    if "surrender" in legal and not soft and (total == 16 and up in (9, 10, 11) or total == 15 and up == 10):
        return "surrender"
    code = _soft(total, up) if soft else _hard(total, up)
    if code.startswith("D"):
        if "double" in legal:
            return "double"
        code = "S" if code == "Ds" else "H"
    action = "stand" if code == "S" else "hit"
    if action not in legal:
        action = "stand" if "stand" in legal else next(iter(sorted(legal)))
    return action
