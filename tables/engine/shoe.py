"""The shoe (RULES 1): 8 decks, cut card, burn, shoe round counter."""
from __future__ import annotations

import secrets
from typing import Protocol

from .cards import ALL_CARDS, card_value

#: How many cards a shuffle burns (RULES 1): the shown card and as many as it is worth, an ace 1 to
#: a ten-value card 10.
BURN_COUNTS = range(2, 12)


class RandomSource(Protocol):
    """Anything with ``shuffle(list)``: ``secrets.SystemRandom()``, ``random.Random(seed)``."""

    def shuffle(self, x: list) -> None: ...


class ShoeExhausted(RuntimeError):
    """Raised by ``Shoe.draw`` when no card is left (cannot happen with a sane penetration)."""


class Shoe:
    """An 8-deck shoe shuffled by an injected random source (RULES 1).

    Args:
      decks: number of 52-card decks (8).
      penetration: fraction of the shoe (0 < p < 1, counted from the top, burn included) at
        which the cut card sits; when a draw passes it, ``cut_card_out`` becomes True and the
        round in progress is the last of the shoe.
      rng: random source with ``shuffle``; default ``secrets.SystemRandom()``; tests pass
        ``random.Random(seed)``.

    After every shuffle the first card is drawn and shown (``shown``), then as many cards as its
    value are burned (A=1, J/Q/K=10); the shown card is discarded too (``burned`` = shown + burned
    cards). ``shoe_round`` counts rounds from 1 after each shuffle; call ``begin_round()`` at the
    start of each round and ``end_round()`` at its end (reshuffles after the cut-card round).
    """

    def __init__(self, decks: int = 8, penetration: float = 0.8, rng: RandomSource | None = None):
        if not 0 < penetration < 1:
            raise ValueError("penetration must be a fraction of the shoe, 0 < p < 1")
        self.decks = decks
        self.penetration = penetration
        self.rng = rng if rng is not None else secrets.SystemRandom()
        self.shuffles = 0
        self.shuffle()

    @property
    def size(self) -> int:
        """Cards in a full shoe (416 for 8 decks)."""
        return 52 * self.decks

    def shuffle(self) -> None:
        """Collect all decks, shuffle, burn (RULES 1) and reset the round counter to 0."""
        cards = list(ALL_CARDS) * self.decks
        self.rng.shuffle(cards)
        self._cards = cards
        self._pos = 0
        self.cut_position = int(self.size * self.penetration)
        self.cut_card_out = False
        self.shoe_round = 0
        self.shuffles += 1
        self.shown = self._take()
        self.burned = [self.shown] + [self._take() for _ in range(card_value(self.shown))]

    def _take(self) -> str:
        if self._pos >= len(self._cards):
            raise ShoeExhausted("no card left in the shoe")
        c = self._cards[self._pos]
        self._pos += 1
        if self._pos >= self.cut_position:
            self.cut_card_out = True
        return c

    def draw(self) -> str:
        """Deal the next card (normalised code). Sets ``cut_card_out`` when the cut card is reached."""
        return self._take()

    @property
    def remaining(self) -> int:
        """Cards not yet dealt."""
        return len(self._cards) - self._pos

    @property
    def dealt(self) -> int:
        """Cards taken from the shoe since the shuffle (burn included)."""
        return self._pos

    def begin_round(self) -> int:
        """Start a round; reshuffles first if the previous round was the cut-card round.
        Returns the 1-based shoe round number."""
        if self.cut_card_out and self.shoe_round > 0:
            self.shuffle()
        self.shoe_round += 1
        return self.shoe_round

    def end_round(self) -> bool:
        """End a round; returns True (and reshuffles) if it was the last round of the shoe."""
        if self.cut_card_out:
            self.shuffle()
            return True
        return False
