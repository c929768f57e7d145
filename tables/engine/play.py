"""Live dealing of a round, for the simulator and ``python -m tables.engine deal`` (RULES 3, 4, 7).

``RoundPlay(rules, shoe, bets, decide=...)`` deals one round incrementally in the variant's deal
order and asks ``decide(view, legal) -> action | None`` for each decision (None = timeout:
auto-play completes that hand and every later hand of that seat/player, because a record's
actions are positional). ``play()`` returns a valid round record (docs/round-record.md).
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from .hand import is_blackjack, score
from .handplay import dealer_play, hand_steps
from .legal import fallback, legal_actions
from .rules import RuleSet, ruleset
from .shoe import Shoe
from .strategy import basic_strategy


@dataclass(frozen=True)
class HandView:
    """What a deciding player sees: ``seat`` (None in boundless), ``bet_id`` (boundless main bet
    or the seat's main bet), ``hand_index`` (0, or 1 for the second split hand), ``cards``,
    ``dealer_up``, ``split``, ``split_aces``, ``actions`` (taken on this hand)."""
    seat: int | None
    bet_id: str | None
    hand_index: int
    cards: tuple
    dealer_up: str
    split: bool
    split_aces: bool
    actions: tuple


Decide = Callable[[HandView, frozenset], "str | None"]
CanAfford = Callable[[HandView, str], bool]
CanAffordAll = Callable[[list], list]


def _stand_or_auto(view: HandView, legal: frozenset) -> str | None:
    return None


class RoundPlay:
    """Deal and play one round live.

    Args:
      rules: the table's ``RuleSet``.
      shoe: a ``Shoe``; ``begin_round()`` is called unless ``shoe_round`` is given.
      bets: round-record bets (dicts, stakes as strings) placed before the deal. ``insurance`` on
        main/behind bets is the player's intent: kept only if the dealer's first card is an ace.
        Boundless main bets get their ``actions`` filled in.
      decide: ``decide(view, legal) -> action | None``; default: always None (auto-play).
      can_afford: ``can_afford(view, action) -> bool`` for double/split; when False the RULES 4
        fallback (``legal.fallback``) is played and recorded instead.
      can_afford_all: instead of ``can_afford``, ``can_afford_all([(view, action), ...]) -> [bool]``
        for the doubles and splits decided together: a seat's one, or at the shared hand every
        player's decision on the same cards (each player decides once, then waits for the next
        card: the players are played side by side, one batch per card).

    ``dealt``: while ``play()`` runs, the cards dealt so far, ``{destination: [cards]}``
    (``dealer``, ``seat:N`` or ``player``: where a studio's scanner reports them).
    """

    def __init__(self, rules: RuleSet, shoe: Shoe, bets: list, *, decide: Decide | None = None,
                 can_afford: CanAfford | None = None, can_afford_all: CanAffordAll | None = None,
                 round_id: str = "R-1", currency: str = "EUR", shoe_round: int | None = None):
        self.rules = rules
        self.shoe = shoe
        self.bets = [dict(b) for b in bets]
        self.decide = decide or _stand_or_auto
        if can_afford_all is None and can_afford is not None:
            def can_afford_all(asks):
                return [can_afford(view, action) for view, action in asks]
        self.can_afford_all = can_afford_all
        self.round_id = round_id
        self.currency = currency
        self.shoe_round = shoe_round
        self.dealt: dict = {}

    def _play_side_by_side(self, players: list) -> list:
        """Play ``players`` (``(seat, bet_id, up, actions_out, steps)``: ``steps`` a
        ``hand_steps`` generator, ``actions_out`` the list the player's actions go to) side by side:
        each unfinished player's next decision, then the doubles and splits among them in one
        ``can_afford_all`` call, then each plays on to its next decision. A timeout hands the rest
        of that player's hands to auto-play. Returns each player's hands, in order."""
        rules = self.rules
        hands: list = [None] * len(players)
        timed_out = [False] * len(players)
        asked = {}
        for k, (*_, steps) in enumerate(players):
            self._step(k, steps, None, asked, hands, first=True)
        while asked:
            chosen = {}
            for k, (h, i) in asked.items():
                seat, bet_id, up, _, _ = players[k]
                if timed_out[k]:
                    chosen[k] = (None, None)
                    continue
                legal = legal_actions(rules, h.cards, up, split=h.split, split_aces=h.split_aces, actions=h.actions)
                view = HandView(seat, bet_id, i, tuple(h.cards), up, h.split, h.split_aces, h.actions)
                a = self.decide(view, legal)
                if a is not None and a not in legal:
                    raise ValueError(f"decide() returned {a!r}, not one of {sorted(legal)}")
                timed_out[k] = a is None
                chosen[k] = (view, a)
            asks = [k for k, (_, a) in chosen.items() if a in ("double", "split")]
            if asks and self.can_afford_all is not None:
                afforded = self.can_afford_all([chosen[k] for k in asks])
                for k, ok in zip(asks, afforded, strict=True):
                    if not ok:
                        view, a = chosen[k]
                        chosen[k] = (view, fallback(rules, a, score(view.cards)))
            now, asked = asked, {}
            for k in now:
                a = chosen[k][1]
                if a is not None:
                    players[k][3].append(a)
                self._step(k, players[k][4], a, asked, hands)
        return hands

    @staticmethod
    def _step(k, steps, action, asked, hands, first=False):
        """Send ``action`` to player ``k``'s ``steps`` (start them when ``first``): its next
        decision goes to ``asked``, or its hands to ``hands`` once it has played them all."""
        try:
            asked[k] = next(steps) if first else steps.send(action)
        except StopIteration as done:
            hands[k] = done.value

    def play(self) -> dict:
        """Deal the round and return its round record (dict)."""
        rules, shoe = self.rules, self.shoe
        shoe_round = self.shoe_round if self.shoe_round is not None else shoe.begin_round()
        draw = shoe.draw
        dealer: list = []
        record = {"format": "round-record/1", "variant": rules.variant, "round": self.round_id,
                  "shoe_round": shoe_round, "currency": self.currency, "dealer": dealer}
        self.dealt.clear()
        self.dealt["dealer"] = dealer
        if rules.shared_hand:
            pc = self.dealt["player"] = [draw()]
            dealer.append(draw())
            pc.append(draw())
            dealer.append(draw())
        else:
            seat_nos = sorted({b["seat"] for b in self.bets if b["type"] == "main"})
            cards = {n: [] for n in seat_nos}
            self.dealt.update((f"seat:{n}", hand) for n, hand in cards.items())
            for n in seat_nos:
                cards[n].append(draw())
            dealer.append(draw())
            for n in seat_nos:
                cards[n].append(draw())
            if rules.hole_card:
                dealer.append(draw())
        up = dealer[0]
        for b in self.bets:
            if b.get("insurance") and up[0] != "A":
                b["insurance"] = False
        peek_end = rules.peek and is_blackjack(dealer)
        any_live = False
        if rules.shared_hand:
            players = []
            for b in self.bets:
                if b["type"] != "main":
                    continue
                pos = [2]

                def pdraw(pos=pos):
                    if pos[0] == len(pc):
                        pc.append(draw())
                    pos[0] += 1
                    return pc[pos[0] - 1]
                b["actions"] = []
                players.append((None, b["id"], up, b["actions"], hand_steps(rules, pc[:2], pdraw, peek_end)))
            self._play_side_by_side(players)
            record["player_cards"] = pc
        else:
            seats = {}
            main_of = {b["seat"]: b["id"] for b in self.bets if b["type"] == "main"}
            for n in seat_nos:
                sc = cards[n]

                def sdraw(sc=sc):
                    c = draw()
                    sc.append(c)
                    return c
                actions = []
                [hands] = self._play_side_by_side([(n, main_of[n], up, actions,
                                                    hand_steps(rules, sc[:2], sdraw, peek_end))])
                any_live = any_live or any(h.live for h in hands)
                seats[str(n)] = {"cards": sc, "actions": actions}
            record["seats"] = seats
            if not rules.hole_card:
                dealer.append(draw())  # classic: the dealer's second card after the players
        if not peek_end:
            dealer_play(rules, dealer, draw, any_live)
        record["bets"] = self.bets
        return record


STAKES = ("0.25", "1.00", "2.50", "5.00", "10.00", "12.35", "25.00", "100.00")


def random_decider(rng: random.Random, deviate: float = 0.2, timeout: float = 0.1) -> Decide:
    """Basic strategy with probability ``1 - deviate - timeout``, a random legal action with
    ``deviate``, None (timeout) with ``timeout``."""
    def decide(view: HandView, legal: frozenset):
        x = rng.random()
        if x < timeout:
            return None
        if x < timeout + deviate:
            return rng.choice(sorted(legal))
        return basic_strategy(view.cards, view.dealer_up, legal)
    return decide


def random_bets(rules: RuleSet, rng: random.Random, shoe_round: int, players: int | None = None) -> list:
    """Random legal bets of every type the variant offers in ``shoe_round`` (RULES 6, 8, 9)."""
    bets: list = []

    def add(**b):
        b["id"] = f"b-{len(bets) + 1}"
        bets.append(b)
    side_types = [t for t in sorted(rules.bet_types) if t not in ("main", "behind")
                  and rules.offered(t, shoe_round)]
    if rules.shared_hand:
        n = players if players is not None else rng.randint(1, 10)
        for p in range(1, n + 1):
            pid = f"p-{p}"
            if rng.random() < 0.8:
                add(player=pid, type="main", stake=rng.choice(STAKES), insurance=rng.random() < 0.3)
            for t in side_types:
                if rng.random() < 0.3:
                    add(player=pid, type=t, stake=rng.choice(STAKES))
        return bets
    k = rng.randint(1, rules.seats)
    seat_nos = sorted(rng.sample(range(1, rules.seats + 1), k))
    owners = {}
    p = 0
    i = 0
    while i < len(seat_nos):
        p += 1
        pid = f"p-{p}"
        stake = rng.choice(STAKES)
        take = 2 if (rules.seats_per_player == 2 and i + 1 < len(seat_nos) and rng.random() < 0.3) else 1
        for n in seat_nos[i:i + take]:
            owners[n] = pid
            add(player=pid, type="main", seat=n, stake=stake, insurance=rng.random() < 0.3)
        i += take
    seated = set(owners.values())
    for n in seat_nos:
        for t in side_types:
            if rng.random() < 0.4:
                add(player=rng.choice([owners[n], f"q-{rng.randint(1, 5)}"]), type=t, seat=n,
                    stake=rng.choice(STAKES))
        for _ in range(rng.randint(0, 2)):
            if rules.seated_may_bet_behind and rng.random() < 0.5:
                cands = [q for q in seated if q != owners[n]]
                pid = rng.choice(cands) if cands else f"q-{rng.randint(1, 5)}"
            else:
                pid = f"q-{rng.randint(1, 5)}"
            if any(b["type"] == "behind" and b["player"] == pid and b["seat"] == n for b in bets):
                continue
            add(player=pid, type="behind", seat=n, stake=rng.choice(STAKES),
                follow_double=rng.random() < 0.5, follow_split=rng.random() < 0.5,
                insurance=rng.random() < 0.3)
    return bets


def deal_round(variant: str, rng: random.Random | None = None, *, players: int | None = None,
               decide: Decide | None = None, shoe_round: int | None = None,
               penetration: float = 0.8) -> dict:
    """One random LEGAL round record of ``variant`` with a fresh shuffled shoe: random bets of
    every type offered (behind bets, insurance intents, follow flags), decisions by basic
    strategy with random deviations and timeouts (``random_decider``) unless ``decide`` given,
    occasional insufficient balance (fallbacks). ``rng`` defaults to ``random.Random()``."""
    rng = rng or random.Random()
    rules = ruleset(variant)
    shoe = Shoe(rng=rng, penetration=penetration)
    if shoe_round is None:
        shoe_round = rng.randint(1, 50)
    bets = random_bets(rules, rng, shoe_round, players)
    play = RoundPlay(rules, shoe, bets, decide=decide or random_decider(rng),
                     can_afford=lambda v, a: rng.random() < 0.9, shoe_round=shoe_round,
                     round_id=f"{variant[:3].upper()}-{shoe_round}")
    return play.play()
