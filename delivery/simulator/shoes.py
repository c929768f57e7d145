"""A table's live shoe: the engine's ``Shoe`` (8 decks, burn, cut card, shoe round counter), the
sequence number the platform knows it by, a log of every shoe dealt, and the drift mode."""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from tables.engine import Shoe


class DealerFavouringShuffle:
    """A random source for ``Shoe`` that, while ``active``, stacks every ace behind the cut card
    after shuffling (so no ace is dealt: no player blackjack, no soft hands): a valid shoe whose
    records settle normally, but whose RTP is measurably low. For the RTP watch (drift)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.active = False
        self.order: list = []

    def shuffle(self, cards: list) -> None:
        """Shuffle ``cards`` in place (when active, the aces go to the back of the shoe, behind
        any cut card) and keep the resulting order in ``order``."""
        self.rng.shuffle(cards)
        if self.active:
            cards.sort(key=lambda c: c[0] == "A")  # stable: the rest keep their shuffled order
        self.order = list(cards)


@dataclass
class ShoeLog:
    """What the simulator knows about one shoe it dealt: ``sequence``, ``shown`` (the card shown
    after the shuffle), ``burned`` (shown + burned face down), ``cut_position`` (cards dealt when
    the cut card comes out), ``order`` (all 416 cards in shoe order), ``stacked`` (drift shoe),
    ``rounds`` (round ids dealt from it)."""

    sequence: int
    shown: str
    burned: list
    cut_position: int
    order: list
    stacked: bool
    rounds: list = field(default_factory=list)


class TableShoe:
    """The shoe of one table across rounds.

    Args:
      rng: the table's ``random.Random``.
      penetration: the table's cut-card position in percent (``Table.penetration``).
      first_sequence: the sequence number of the first shoe (one more than the table's last shoe).

    ``begin_round() -> (sequence, burn_count, shoe_round)`` before opening a round (reshuffles
    after the cut-card round); ``draw()`` deals; ``end_round() -> cut_card_out``;
    ``reshuffle()`` after a classic host disconnection (RULES 10).
    """

    def __init__(self, rng: random.Random, penetration: int, first_sequence: int):
        self.source = DealerFavouringShuffle(rng)
        self.shoe = Shoe(decks=8, penetration=penetration / 100, rng=self.source)
        self.sequence = first_sequence
        self.logs = [self._log()]

    def _log(self) -> ShoeLog:
        s = self.shoe
        return ShoeLog(self.sequence, s.shown, list(s.burned), s.cut_position, self.source.order, self.source.active)

    @property
    def log(self) -> ShoeLog:
        """The log of the shoe in use."""
        return self.logs[-1]

    def set_drift(self, active: bool) -> None:
        """Stack the shuffles against the players (``active``) or not; a change of mode
        reshuffles at once (an unused shoe keeps its sequence number)."""
        if active == self.source.active:
            return
        self.source.active = active
        if self.log.rounds:
            self.reshuffle()
        else:
            self.shoe.shuffle()
            self.logs[-1] = self._log()

    def reshuffle(self) -> None:
        """Collect and reshuffle now (a new shoe with the next sequence number)."""
        self.shoe.shuffle()
        self._new_shoe()

    def _new_shoe(self):
        self.sequence += 1
        self.logs.append(self._log())

    def begin_round(self) -> tuple[int, int, int]:
        """Start a round: ``(shoe sequence, burn count, shoe round)``. The burn count is the number
        of cards taken off before the first round: the shown card plus as many as its value."""
        return self.sequence, len(self.shoe.burned), self.shoe.begin_round()

    def draw(self) -> str:
        """Deal the next card."""
        return self.shoe.draw()

    def out(self) -> Counter:
        """How many of each card the rounds of the shoe in use have dealt so far (burnt cards left out)."""
        return Counter(self.log.order[len(self.log.burned):self.shoe.dealt])

    def end_round(self, round_id) -> bool:
        """End the round ``round_id`` (kept in the log); True if the cut card came out in it (the
        last round of the shoe: the next ``begin_round`` starts a new shoe)."""
        self.log.rounds.append(round_id)
        if self.shoe.end_round():
            self._new_shoe()
            return True
        return False
