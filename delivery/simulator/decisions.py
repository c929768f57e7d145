"""Decisions and extra stakes at decision time (RULES 4, 6).

Players decide by basic strategy with some deviations and timeouts (the engine's
``random_decider``; a timeout hands the rest of the seat's hands to auto-play). The extra stakes
go through ``wagering.extras.add_extra_stakes`` as a studio sends them, the requests decided
together in one batch (in batches of ``EXTRA_BATCH``): insurance once the initial deal is out
(before the peek), every bet's request; a seat's double or split, with the bets behind it that
follow (after it, as docs/game-server-api.md orders them); at the shared hand, every player's
double or split on the same cards (``RoundPlay`` plays the players side by side: each decides,
then waits for the next card). A double or split the wallet cannot cover (or a seamless
operator's wallet does not take) comes back as not applied, and ``RoundPlay`` then plays the
RULES 4 fallback; a follow of a seat's double or split not taken is then refused and not taken.
The cards dealt so far are scanned (``scanner``) before each batch (for insurance, the dealer's up
card only: the hole card comes after it, RULES 3): the platform checks an extra stake against them."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from tables.engine.play import HandView, random_decider
from wagering.exceptions import InvalidExtra, WalletRefused
from wagering.extras import add_extra_stakes

from .calls import call
from .scanner import Scanner

#: Shares of players asking for insurance (dealer ace) and of bets behind following their seat.
INSURANCE_RATE = 0.25
FOLLOW_RATE = 0.5
#: Extra stakes per ``add_extra_stakes`` call: one call locks the wallets of all its players until
#: it commits (a round's settlement would wait on thousands at once).
EXTRA_BATCH = 500


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
    """The decide / can_afford_all hooks of ``RoundPlay`` for one round, and insurance.

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

    def _extras(self, requests: list, follows_of=None, dealt: dict | None = None) -> list:
        """``add_extra_stakes`` for ``requests`` (in batches of ``EXTRA_BATCH``) once the cards of
        ``dealt`` (default: all dealt so far) are scanned, each outcome counted; a seamless
        operator's wallet that did not take one is its fallback, as for a wallet short of it
        (RULES 4); any other error is raised, but for a follow of a seat's extra that was not taken
        (``follows_of``: ``{request index: index of the seat's request}``): that follow is refused,
        as the platform must, and not counted."""
        self.scanner.report(self.dealt if dealt is None else dealt)
        outcomes = [outcome for start in range(0, len(requests), EXTRA_BATCH)
                    for outcome in call(add_extra_stakes, round_id=self.round_pk,
                                        extras=requests[start:start + EXTRA_BATCH])]
        for k, (request, outcome) in enumerate(zip(requests, outcomes)):
            seat_request = (follows_of or {}).get(k)
            if seat_request is not None and not outcomes[seat_request].applied:
                if outcome.applied or not isinstance(outcome.error, InvalidExtra):
                    raise RuntimeError(f"{request}: answered {outcome} when its seat's extra was not taken")
                continue
            if outcome.error is not None and not isinstance(outcome.error, WalletRefused):
                raise outcome.error
            self.stats.count(outcome, request["kind"])
        return outcomes

    def offer_insurance(self, up_card: str) -> None:
        """After the initial deal: if the dealer shows an ace, some main and behind bets ask for
        insurance (half the stake), all in one ``_extras`` batch, the dealer's cards scanned up to
        the up card (a hole card is scanned after it, RULES 3); it is on the record only when the
        wallet covered it."""
        if up_card[0] != "A":
            return
        asking = [bet for bet in self.bets if bet["type"] in ("main", "behind") and self.rng.random() < INSURANCE_RATE]
        if not asking:
            return
        shown = {to: cards[:1] if to == "dealer" else cards for to, cards in self.dealt.items()}
        outcomes = self._extras([{"bet": bet["id"], "kind": "insurance"} for bet in asking], dealt=shown)
        for bet, outcome in zip(asking, outcomes):
            bet["insurance"] = outcome.applied

    def decide(self, view: HandView, legal: frozenset):
        """``RoundPlay`` decide hook: an action from ``legal`` or None (timeout: auto-play)."""
        self.deal.close()
        action = self.strategy(view, legal)
        if action is None:
            self.stats.timeouts += 1
        return action

    def can_afford_all(self, asks: list) -> list:
        """``RoundPlay`` can_afford_all hook: ``asks`` = ``[(view, "double" | "split")]``, the doubles
        and splits decided together; takes their extra stakes, with the follows of the bets behind
        each seat (RULES 6), in one batch; answers, per ask, whether it was taken (False: nothing
        debited, the fallback is played)."""
        self.scanner.report(self.dealt)  # first: the hands are named as read
        requests, own, follows_of, follows = [], [], {}, []
        for view, action in asks:
            place = "player" if view.seat is None else f"seat:{view.seat}"
            own.append(len(requests))
            hand = view.hand_index + 1 if action == "double" else 1
            requests.append({"bet": view.bet_id, "kind": action, "hand": hand,
                             "cards": self.scanner.hand_as_read(place, view.cards, view.hand_index == 0)})
            if view.seat is not None:
                for bet, kind in self._followers(view.seat, action, view.hand_index):
                    follows_of[len(requests)] = own[-1]
                    follows.append((bet, kind, len(requests)))
                    requests.append({"bet": bet["id"], "kind": kind})
        outcomes = self._extras(requests, follows_of)
        for bet, kind, k in follows:
            bet[kind] = outcomes[k].applied
        return [outcomes[k].applied for k in own]

    def _followers(self, seat: int, action: str, hand_index: int) -> list:
        """``[(bet, follow kind)]``: the bets behind ``seat`` that follow its split, or its double on
        the first hand. A bet behind that followed a split never follows a double (its one
        ``follow_double`` flag would then have to hold for both hands, and the second might not be
        covered)."""
        followers = []
        for bet in self.bets:
            if bet["type"] != "behind" or bet["seat"] != seat or self.rng.random() >= FOLLOW_RATE:
                continue
            if action == "split":
                followers.append((bet, "follow_split"))
            elif hand_index == 0 and not bet.get("follow_split"):
                followers.append((bet, "follow_double"))
        return followers
