"""Playing a player's hand(s) and the dealer's hand (RULES 3, 4, 7).

Shared by the record replay (``settling``) and live dealing (``play``): the same code decides what
a split, a double, auto-play or a 21 does, whatever supplies the cards and decisions.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from .cards import CARD_VALUE
from .hand import is_blackjack, score
from .legal import auto_action
from .rules import RuleSet

PLAYER = "player"
AUTO = "auto"


class HandPlay:
    """One player hand while (and after) it is played.

    ``cards`` (list of codes), ``split`` (comes from a split), ``split_aces``, ``second`` (the
    second hand of a split: its whole stake is an extra), ``doubled``, ``surrendered``,
    ``finished``, ``decisions``: list of ``(action, by)`` with ``by`` in ``"player" | "auto"``.
    """

    __slots__ = ("cards", "split", "split_aces", "second", "doubled", "surrendered", "finished",
                 "decisions")

    def __init__(self, cards: list, split: bool = False, split_aces: bool = False, second: bool = False):
        self.cards = cards
        self.split = split
        self.split_aces = split_aces
        self.second = second
        self.doubled = False
        self.surrendered = False
        self.finished = False
        self.decisions: list = []

    @property
    def actions(self) -> tuple:
        """Actions taken on this hand so far (for ``legal.why_illegal``)."""
        return tuple(a for a, _ in self.decisions)

    @property
    def score(self) -> int:
        return score(self.cards)

    @property
    def blackjack(self) -> bool:
        return is_blackjack(self.cards, self.split)

    @property
    def bust(self) -> bool:
        return score(self.cards) > 21

    @property
    def live(self) -> bool:
        """Still matters to the dealer's draw: not bust, not surrendered, not a blackjack (RULES 3)."""
        return not (self.surrendered or self.bust or self.blackjack)


Decide = Callable[[HandPlay, int], "str | None"]


def play_hands(rules: RuleSet, initial: Sequence[str], draw: Callable[[], str], decide: Decide,
               round_over: bool = False) -> list[HandPlay]:
    """Play one seat's (or one boundless player's) hands to the end (RULES 4): ``hand_steps``
    driven by ``decide(hand, hand_index) -> action | None`` (called while a hand is unfinished; it
    must return a LEGAL action, the caller checks ``legal.why_illegal`` and raises its own error,
    or None = no decision (timeout): auto-play then completes that hand). Returns the hands in play
    order (one, or two after a split)."""
    steps = hand_steps(rules, initial, draw, round_over)
    try:
        asked = next(steps)
        while True:
            asked = steps.send(decide(*asked))
    except StopIteration as done:
        return done.value


def hand_steps(rules: RuleSet, initial: Sequence[str], draw: Callable[[], str], round_over: bool = False):
    """The play of one seat's (or one boundless player's) hands as a generator, to play many
    players' hands side by side (boundless: every player's decisions of a card in one batch).

    Args:
      initial: the two initial cards.
      draw: ``draw() -> card`` gives the next card for this player (seat cards in dealt order, or
        the boundless shared sequence from c3 in the order this player asks).
      round_over: the round ended at the peek: the hand is finished as dealt.
    Yields ``(hand, hand_index)`` for each decision on an unfinished hand and takes the action sent
    back (a LEGAL action, or None = timeout: auto-play completes that hand). Returns (as
    ``StopIteration.value``) the hands in play order (one, or two after a split).
    """
    first = HandPlay(list(initial))
    if round_over or is_blackjack(first.cards):
        first.finished = True
    hands = [first]
    i = 0
    while i < len(hands):
        h = hands[i]
        if len(h.cards) == 1:  # a split hand takes its second card when it comes into play
            h.cards.append(draw())
            if h.split_aces or score(h.cards) == 21:
                h.finished = True
        auto = False
        while not h.finished:
            a = None if auto else (yield h, i)
            if a is None:
                auto = True
                a = auto_action(h.cards)
                by = AUTO
            else:
                by = PLAYER
            h.decisions.append((a, by))
            if a == "hit":
                h.cards.append(draw())
                if score(h.cards) >= 21:
                    h.finished = True
            elif a == "stand":
                h.finished = True
            elif a == "double":
                h.doubled = True
                h.cards.append(draw())
                h.finished = True
            elif a == "surrender":
                h.surrendered = True
                h.finished = True
            elif a == "split":
                c1, c2 = h.cards
                aces = CARD_VALUE[c1] == 1
                h.cards = [c1]
                h.split = True
                h.split_aces = aces
                hands.insert(i + 1, HandPlay([c2], split=True, split_aces=aces, second=True))
                h.cards.append(draw())
                if aces or score(h.cards) == 21:
                    h.finished = True
            else:  # pragma: no cover - decide() must return a legal action
                raise ValueError(f"unknown action {a!r}")
        i += 1
    return hands


def dealer_cards_needed(rules: RuleSet, dealer: Sequence[str], any_live: bool) -> int:
    """How many cards the dealer's hand must have given its cards in order (RULES 3, S17).

    Two cards when: the peek finds a dealer blackjack (premium, boundless); or, in classic and
    premium, no seated hand is live ([decision] RULES 3; premium's all-blackjack end is a case of
    this). Otherwise the dealer draws while the score is 16 or less (stands on soft 17).
    Returns ``len(dealer) + 1`` when the given cards are too few (the next draw is missing).
    """
    if rules.peek and is_blackjack(dealer[:2]):
        return 2
    if not rules.dealer_always_completes and not any_live:
        return 2
    n = 2
    while score(dealer[:n]) < 17:
        n += 1
        if n > len(dealer):
            return n
    return n


def dealer_play(rules: RuleSet, dealer: list, draw: Callable[[], str], any_live: bool) -> list:
    """Live: complete the dealer's hand (which has its first two cards) per ``dealer_cards_needed``."""
    while len(dealer) < dealer_cards_needed(rules, dealer, any_live):
        dealer.append(draw())
    return dealer
