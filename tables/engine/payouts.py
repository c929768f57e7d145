"""Hand outcomes and main-bet / insurance returns (RULES 4, 5).

"Return" = everything credited back (stake returned + winnings). Winnings and half amounts are
rounded DOWN to the minor unit ([decision] RULES 4, 5).
"""
from __future__ import annotations

from decimal import Decimal

from .hand import is_blackjack, score
from .money import round_down
from .rules import RuleSet

OUTCOMES = ("blackjack", "win", "push", "lose", "surrender")


def hand_outcome(cards, split: bool, surrendered: bool, dealer_score: int, dealer_bj: bool) -> str:
    """Outcome of one player hand against the dealer (RULES 5):
    ``blackjack | win | push | lose | surrender``. A player blackjack beats everything but a
    dealer blackjack (push); a dealer blackjack beats every other hand; a bust always loses."""
    if surrendered:
        return "surrender"
    s = score(cards)
    if s > 21:
        return "lose"
    if is_blackjack(cards, split):
        return "push" if dealer_bj else "blackjack"
    if dealer_bj:
        return "lose"
    if dealer_score > 21 or s > dealer_score:
        return "win"
    return "push" if s == dealer_score else "lose"


def hand_return(rules: RuleSet, outcome: str, stake: Decimal, refund: Decimal, minor_units: int
                ) -> tuple[Decimal, Decimal | None]:
    """``(return, odds)`` for a hand with ``stake`` (its whole stake, doubles included).

    blackjack: stake + stake x 3:2 (rounded down); win: stake + stake x 1:1; push: stake;
    surrender: half the stake rounded down; lose: ``refund`` (0, except classic's late dealer
    blackjack [decision] RULES 5: the extra stakes of doubles / second split hand).
    """
    if outcome == "win" or outcome == "blackjack":
        odds = rules.pay_tables["main"][outcome]
        return stake + round_down(stake * odds, minor_units), odds
    if outcome == "push":
        return stake, None
    if outcome == "surrender":
        return round_down(stake / 2, minor_units), None
    return refund, None


def insurance_stake(stake: Decimal, minor_units: int) -> Decimal:
    """Insurance stake: half the main stake rounded DOWN to the minor unit (RULES 4 [decision])."""
    return round_down(stake / 2, minor_units)


def insurance_return(rules: RuleSet, ins_stake: Decimal, dealer_bj: bool, minor_units: int) -> Decimal:
    """Insurance pays 2:1 when the dealer has blackjack (returns 3x), else 0 (RULES 4)."""
    if not dealer_bj:
        return ins_stake * 0
    return ins_stake + round_down(ins_stake * rules.pay_tables["insurance"]["win"], minor_units)
