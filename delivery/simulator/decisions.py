"""Decisions and extra stakes at decision time (RULES 4, 6).

Players decide by basic strategy with some deviations and timeouts (the engine's
``random_decider``; a timeout hands the rest of the seat's hands to auto-play). Every extra stake
goes through ``wagering.extras.add_extra_stakes`` when it is decided: a double or split the
wallet cannot cover (or a seamless operator's wallet does not take) comes back as not applied,
and ``RoundPlay`` then plays the RULES 4 fallback (so each is its own call: the play needs the
answer before it goes on); insurance is offered once the initial deal is out, before the hole
card is scanned (the peek, RULES 3), every bet's request in one ``add_extra_stakes`` batch; bets
behind choose to follow a double or a split of their seat. The cards dealt so far are scanned
(``scanner``) before each request: the platform checks an extra stake against them."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from tables.engine.play import HandView, random_decider
from wagering.exceptions import WalletRefused
from wagering.extras import add_extra_stakes

from .calls import call
from .scanner import Scanner

#: Shares of players asking for insurance (dealer ace) and of bets behind following their seat.
INSURANCE_RATE = 0.25
FOLLOW_RATE = 0.5


@dataclass
class DecisionStats:
    """Counts across a run: extra stakes taken per kind, fallbacks (wallet short), timeouts."""

    extras: dict = field(default_factory=dict)
    fallbacks: dict = field(default_factory=dict)
    timeouts: int = 0

    def count(self, outcome, kind: str) -> None:
        """Count an ``ExtraOutcome`` of ``kind``."""
        bucket = self.extras if outcome.applied else self.fallbacks
        bucket[kind] = bucket.get(kind, 0) + 1


class InitialDeal:
    """The table's shoe as ``RoundPlay`` sees it: calls ``on_dealt(up_card)`` once, when the initial
    deal is out (before the next card is drawn or the first decision is asked, or at the end of a
    round that needed neither, e.g. a peeked dealer blackjack).

    Args: ``shoe`` (has ``draw()``); ``initial``: cards in the initial deal; ``up_index``: position
    of the dealer's first card in it; ``on_dealt``: the callback."""

    def __init__(self, shoe, initial: int, up_index: int, on_dealt):
        self.shoe, self.initial, self.up_index, self.on_dealt = shoe, initial, up_index, on_dealt
        self.cards: list = []
        self.done = False

    def draw(self) -> str:
        """Deal the next card (first closing the initial deal if it is complete)."""
        if len(self.cards) == self.initial:
            self.close()
        card = self.shoe.draw()
        self.cards.append(card)
        return card

    def close(self) -> None:
        """Close the initial deal (idempotent)."""
        if not self.done:
            self.done = True
            self.on_dealt(self.cards[self.up_index])


class RoundDecisions:
    """The decide / can_afford hooks of ``RoundPlay`` for one round, and insurance.

    Args:
      round_pk: the platform's round id; ``bets``: the record's bet dicts (``RoundPlay.bets``,
      mutated: ``insurance`` / ``follow_*`` flags set when the extra stake is taken);
      rng; ``deviate`` / ``timeout``: shares of decisions off basic strategy / timed out;
      ``stats``: a ``DecisionStats``; ``scanner``: the round's ``Scanner``.
    """

    def __init__(self, round_pk: int, rng: random.Random, deviate: float, timeout: float, stats: DecisionStats,
                 scanner: Scanner):
        self.round_pk, self.rng, self.stats, self.scanner = round_pk, rng, stats, scanner
        self.strategy = random_decider(rng, deviate=deviate, timeout=timeout)
        self.bets: list = []
        self.dealt: dict = {}
        self.deal: InitialDeal | None = None

    def attach(self, bets: list, dealt: dict, deal: InitialDeal) -> None:
        """Use ``bets`` (the live ``RoundPlay.bets``), ``dealt`` (its live ``RoundPlay.dealt``) and
        ``deal`` (closed before the first decision)."""
        self.bets, self.dealt, self.deal = bets, dealt, deal

    def _extra(self, bet_id: str, kind: str, hand: int = 1, cards=None):
        [outcome] = self._extras([{"bet": bet_id, "kind": kind, "hand": hand, "cards": cards}])
        return outcome.applied

    def _extras(self, requests: list, dealt: dict | None = None) -> list:
        """``add_extra_stakes`` for ``requests`` once the cards of ``dealt`` (default: all dealt so
        far) are scanned, each outcome counted; a seamless operator's wallet that did not take one is
        its fallback, as for a wallet short of it (RULES 4); any other error is raised."""
        self.scanner.report(self.dealt if dealt is None else dealt)
        outcomes = call(add_extra_stakes, round_id=self.round_pk, extras=requests)
        for request, outcome in zip(requests, outcomes):
            if outcome.error is not None and not isinstance(outcome.error, WalletRefused):
                raise outcome.error
            self.stats.count(outcome, request["kind"])
        return outcomes

    def offer_insurance(self, up_card: str) -> None:
        """After the initial deal: if the dealer shows an ace, some main and behind bets ask for
        insurance (half the stake), all in one ``add_extra_stakes`` batch, the dealer's cards
        scanned up to the up card (a hole card is scanned after it, RULES 3); it is on the record
        only when the wallet covered it."""
        if up_card[0] != "A":
            return
        asking = [bet for bet in self.bets if bet["type"] in ("main", "behind") and self.rng.random() < INSURANCE_RATE]
        if not asking:
            return
        shown = {to: cards[:1] if to == "dealer" else cards for to, cards in self.dealt.items()}
        outcomes = self._extras([{"bet": bet["id"], "kind": "insurance"} for bet in asking], shown)
        for bet, outcome in zip(asking, outcomes):
            bet["insurance"] = outcome.applied

    def decide(self, view: HandView, legal: frozenset):
        """``RoundPlay`` decide hook: an action from ``legal`` or None (timeout: auto-play)."""
        self.deal.close()
        action = self.strategy(view, legal)
        if action is None:
            self.stats.timeouts += 1
        return action

    def can_afford(self, view: HandView, action: str) -> bool:
        """``RoundPlay`` can_afford hook for a double or split: takes the extra stake now; False
        (nothing debited, the fallback is played) when the wallet cannot cover it. Then the bets
        behind the seat choose whether to follow (RULES 6)."""
        hand = view.hand_index + 1 if action == "double" else 1
        self.scanner.report(self.dealt)
        cards = self.scanner.hand_as_read("player" if view.seat is None else f"seat:{view.seat}", view.cards,
                                          view.hand_index == 0)
        if not self._extra(view.bet_id, action, hand=hand, cards=cards):
            return False
        if view.seat is not None:
            self._follow(view.seat, action, view.hand_index)
        return True

    def _follow(self, seat: int, action: str, hand_index: int) -> None:
        """Bets behind ``seat`` follow its split, or its double on the first hand. A bet behind
        that followed a split never follows a double (its one ``follow_double`` flag would then
        have to hold for both hands, and the second might not be covered)."""
        for bet in self.bets:
            if bet["type"] != "behind" or bet["seat"] != seat or self.rng.random() >= FOLLOW_RATE:
                continue
            if action == "split":
                bet["follow_split"] = self._extra(bet["id"], "follow_split")
            elif hand_index == 0 and not bet.get("follow_split"):
                bet["follow_double"] = self._extra(bet["id"], "follow_double")
