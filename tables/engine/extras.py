"""Extra stakes a bet takes at decision time (RULES 4, 6): which kinds a bet type takes and on which
hand, what each one costs, and what must come before it.

Kinds: ``double`` and ``split`` (a seat's own hand or a boundless main bet; the amount is the
original stake), ``insurance`` (main or behind; half the stake, RULES 4), ``follow_double`` and
``follow_split`` (a bet behind following its seat's double or split; the amount is the bet's
stake, RULES 6). Hand 2 is the second hand of a split: only a double (or a follow of one) is
taken there.
"""
from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from .hand import is_blackjack
from .payouts import insurance_stake
from .rules import RuleSet

#: The extra kinds each bet type takes (RULES 4 main bets, RULES 6 bets behind).
EXTRA_KINDS = {"main": frozenset({"double", "split", "insurance"}),
               "behind": frozenset({"insurance", "follow_double", "follow_split"})}
#: A bet behind's follow and the seat's action it follows (RULES 6).
FOLLOWS = {"follow_double": "double", "follow_split": "split"}


def extra_kinds(rules: RuleSet, bet_type: str) -> frozenset[str]:
    """The extra kinds a ``bet_type`` bet takes at ``rules``' tables (none for a side bet, nor for a
    type the variant does not offer)."""
    return EXTRA_KINDS.get(bet_type, frozenset()) if bet_type in rules.bet_types else frozenset()


def why_extra_refused(rules: RuleSet, bet_type: str, kind: str, hand: int) -> str | None:
    """None if a ``bet_type`` bet may take a ``kind`` extra stake on hand ``hand`` (1 or 2), else the
    reason: the bet type takes no such kind, or hand 2 takes only a double (RULES 4: no resplit)."""
    if kind not in extra_kinds(rules, bet_type):
        return f"a {bet_type} bet takes no {kind}"
    if hand not in (1, 2) or (hand == 2 and kind not in ("double", "follow_double")):
        return f"no {kind} on hand {hand}"
    return None


def why_not_now(rules: RuleSet, kind: str, dealer: Sequence[str]) -> str | None:
    """None if a ``kind`` extra stake may be taken now, the dealer's cards scanned so far being
    ``dealer`` (in order), else the reason (RULES 3 "Peek", RULES 4 "insurance"). Every extra is
    decided once the dealer's up card is out, insurance on an ace only (a bet on the dealer's
    blackjack; the rules know no even money: a player blackjack insures like any hand). With a hole
    card (premium, boundless) insurance is decided before the peek, while the dealer shows the up
    card alone, and the other extras after it: once the hole card is out, and never on a dealer
    blackjack (the round ended at the peek). Without one (classic) the dealer's second card comes
    once every player has finished: every extra is decided while the dealer has one card."""
    if not dealer:
        return f"{kind} is taken once the dealer's up card is reported (card_scanned to dealer)"
    if kind == "insurance" and dealer[0][0] != "A":
        return f"insurance is offered on a dealer ace only; the up card is {dealer[0]}"
    if not rules.peek:
        return None if len(dealer) == 1 else f"{kind} not allowed: the dealer's second card is out, play is over"
    if kind == "insurance":
        return None if len(dealer) == 1 else "insurance is decided before the peek: the dealer's hole card is out"
    if len(dealer) == 1:
        return f"{kind} is taken after the peek, once the dealer's hole card is reported"
    if is_blackjack(dealer[:2]):
        return f"{kind} not allowed: the round ended at the peek (dealer blackjack)"
    return None


def why_not_scanned(cards: Sequence[str], scanned: Sequence[str], *, hand: int, split: bool,
                    shared: bool) -> str | None:
    """None if ``cards`` (the hand a double or split names) are that hand's cards so far, the cards
    scanned to its place (a seat's, or boundless's shared sequence c1, c2, c3...) being ``scanned``
    in order; else the reason. A seat's hand: before a split, every card of the seat; after it, the
    first hand is the first card and the cards from the third on (it is played first), the second
    hand the second card and the seat's last cards, after the first hand's. Boundless (``shared``):
    each player draws from the start of the sequence (RULES 7), so the hand is a prefix of the same
    (the second split hand: the second card, then cards after the first hand's own)."""
    n = len(cards)
    if hand == 2:
        fits = list(cards[:1]) == list(scanned[1:2]) and any(
            list(scanned[k:k + n - 1]) == list(cards[1:]) for k in range(3, len(scanned) - n + 2)
            if shared or k + n - 1 == len(scanned))
    else:
        own = list(scanned[:1]) + list(scanned[2:]) if split else list(scanned)
        fits = (own[:n] if shared else own) == list(cards)
    if fits:
        return None
    return f"not the hand's cards as scanned ({' '.join(scanned) or 'no card'})"


def extra_stake(kind: str, stake: Decimal, minor_units: int) -> Decimal:
    """The amount of a ``kind`` extra stake on a bet of original ``stake``: half of it rounded DOWN
    to the minor unit for insurance (RULES 4 [decision]; 0 when half is less than one minor unit:
    no insurance can be bought), the stake itself otherwise."""
    return insurance_stake(stake, minor_units) if kind == "insurance" else stake


def own_prerequisite(kind: str, hand: int) -> str | None:
    """The extra the same bet must already hold (on either hand) before ``kind`` on ``hand``: a
    second hand exists only after a split (``split``, or ``follow_split`` for a bet behind)."""
    if hand != 2:
        return None
    return "follow_split" if kind.startswith("follow_") else "split"


def seat_prerequisite(kind: str) -> str | None:
    """The seat's own action a bet behind's ``kind`` follows (``double`` / ``split``), or None."""
    return FOLLOWS.get(kind)
