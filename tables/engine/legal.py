"""Legal actions, insufficient-balance fallbacks and auto-play (RULES 4).

A hand's state is given as keyword arguments so that the replay, the simulator and the game
server can all call the same functions:

  cards: the hand's cards in order (normalised codes);
  dealer_up: the dealer's first (face-up) card;
  split: the hand comes from a split; split_aces: it is a split ace hand;
  actions: actions already taken ON THIS HAND (a split counts for both hands as taken);
  finished: the hand is over (stood, doubled, surrendered, bust, 21, split aces, round over).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from .cards import CARD_VALUE
from .hand import score
from .rules import ACTIONS, RuleSet


def why_illegal(rules: RuleSet, action: str, cards: Sequence[str], dealer_up: str, *,
                split: bool = False, split_aces: bool = False, actions: Sequence[str] = (),
                finished: bool = False) -> str | None:
    """Return None if ``action`` is legal on the hand, else the reason (used in ``InvalidRecord``
    messages, e.g. ``"double not allowed on a hand of 3 cards"``). RULES 4 table."""
    if action not in ACTIONS:
        return f"unknown action {action!r}"
    if action not in rules.actions:
        return f"{action} not offered in {rules.variant}"
    if finished:
        return f"{action} not allowed: the hand is finished"
    s = score(cards)
    if s >= 21:
        return f"{action} not allowed: the hand is finished ({s})"
    n = len(cards)
    if action in ("hit", "stand"):
        return None
    if action == "double":
        if n != 2:
            return f"double not allowed on a hand of {n} cards"
        if split_aces and not rules.double_split_aces:
            return "double not allowed on split aces"
        if split and not rules.double_after_split:
            return "double not allowed after a split"
        return None
    if action == "split":
        if split and not rules.resplit:
            return "split not allowed on a split hand (no resplit)"
        if n != 2:
            return f"split not allowed on a hand of {n} cards"
        if CARD_VALUE[cards[0]] != CARD_VALUE[cards[1]]:
            return f"split not allowed on a non-pair ({cards[0]} {cards[1]})"
        return None
    # surrender
    if split:
        return "surrender not allowed on a split hand"
    if n != 2 or actions:
        return "surrender not allowed after another action"
    if CARD_VALUE[dealer_up] not in rules.surrender_against:
        return f"surrender not allowed against a dealer {dealer_up} (only 2-9)"
    return None


def legal_actions(rules: RuleSet, cards: Sequence[str], dealer_up: str, *, split: bool = False,
                  split_aces: bool = False, actions: Sequence[str] = (),
                  finished: bool = False) -> frozenset[str]:
    """The set of actions allowed on the hand (subset of hit/stand/double/split/surrender;
    empty when the hand is finished). Balance is not checked here: see ``fallback``. RULES 4."""
    return frozenset(a for a in rules.actions
                     if why_illegal(rules, a, cards, dealer_up, split=split, split_aces=split_aces,
                                    actions=actions, finished=finished) is None)


def fallback(rules: RuleSet, action: str, score_: int) -> str | None:
    """What happens instead of ``action`` when the balance cannot cover its extra stake (RULES 4).

    ``double`` -> premium ``"hit"``; classic [decision] and boundless ``"hit"`` if ``score_`` <= 11
    else ``"stand"``. ``split`` -> ``"hit"`` if <= 11 else ``"stand"``. ``insurance`` -> None (not
    bought). Other actions need no extra stake: returned unchanged.
    """
    if action == "insurance":
        return None
    if action == "double":
        mode = rules.double_fallback
    elif action == "split":
        mode = rules.split_fallback
    else:
        return action
    if mode == "hit":
        return "hit"
    return "hit" if score_ <= 11 else "stand"


def auto_action(cards: Sequence[str]) -> str:
    """Auto-play decision (RULES 4): ``"hit"`` while the score (ace as 11 unless it busts) is 11
    or less, else ``"stand"``. Never doubles, splits, surrenders or insures; never busts."""
    return "hit" if score(cards) <= 11 else "stand"


def auto_play(cards: Sequence[str], draw: Callable[[], str]) -> list[str]:
    """Complete a hand by auto-play: returns the new card list. ``draw()`` supplies the next card."""
    out = list(cards)
    while score(out) <= 11:
        out.append(draw())
    return out
