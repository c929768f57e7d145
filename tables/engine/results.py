"""What settling a round record gives (docs/round-record.md "Result"): the played hands, each bet's
hands, insurance and money, and the round as a whole. Money is ``Decimal`` in minor units; every
``to_dict`` writes it as decimal strings. The algorithm that builds them is ``settling``.
"""
from __future__ import annotations

from decimal import Decimal

from .hand import hand_value, is_blackjack, score
from .handplay import HandPlay
from .money import fmt
from .payouts import hand_outcome, hand_return
from .record import Bet, ParsedRecord
from .rules import RuleSet

ZERO = Decimal(0)


class PlayedHand:
    """A finished player hand, shared by every bet riding on it (no money in it).

    ``cards`` (tuple), ``score``, ``soft``, ``split``, ``split_aces``, ``second`` (second split
    hand), ``doubled``, ``surrendered``, ``blackjack``, ``outcome`` (``blackjack|win|push|lose|
    surrender``), ``decisions``: tuple of ``(action, "player"|"auto")``.
    """

    __slots__ = ("cards", "score", "soft", "split", "split_aces", "second", "doubled",
                 "surrendered", "blackjack", "outcome", "decisions")

    def __init__(self, h: HandPlay, dealer_score: int, dealer_bj: bool):
        self.cards = tuple(h.cards)
        self.score, self.soft = hand_value(h.cards)
        self.split = h.split
        self.split_aces = h.split_aces
        self.second = h.second
        self.doubled = h.doubled
        self.surrendered = h.surrendered
        self.blackjack = is_blackjack(h.cards, h.split)
        self.decisions = tuple(h.decisions)
        self.outcome = hand_outcome(h.cards, h.split, h.surrendered, dealer_score, dealer_bj)

    def to_dict(self) -> dict:
        return {"cards": list(self.cards), "score": self.score, "soft": self.soft,
                "blackjack": self.blackjack, "split": self.split, "doubled": self.doubled,
                "surrendered": self.surrendered, "outcome": self.outcome,
                "decisions": [{"action": a, "by": by} for a, by in self.decisions]}


class HandResult:
    """One hand as settled for ONE bet: the ``PlayedHand`` fields plus ``stake`` (this bet's
    stake on the hand, double included), ``doubled`` (for this bet: a bet behind that did not
    follow a double keeps its stake), ``returned``, ``odds`` (Decimal N of N:1 when paid, else
    None) and ``note`` (e.g. the classic late dealer-blackjack refund)."""

    __slots__ = ("hand", "stake", "returned", "odds", "doubled", "note")

    def __init__(self, hand: PlayedHand, stake, returned, odds, doubled, note=None):
        self.hand = hand
        self.stake = stake
        self.returned = returned
        self.odds = odds
        self.doubled = doubled
        self.note = note

    def __getattr__(self, name):  # cards, score, outcome, decisions... from the played hand
        return getattr(self.hand, name)

    def to_dict(self) -> dict:
        d = self.hand.to_dict()
        d.update(stake=fmt(self.stake), returned=fmt(self.returned), doubled=self.doubled,
                 odds=None if self.odds is None else str(self.odds), note=self.note)
        return d


class InsuranceResult:
    """Insurance on a main / behind bet: ``stake`` (half the stake rounded down), ``returned``
    (3x when the dealer has blackjack, else 0), ``outcome`` ``win|lose`` (RULES 4)."""

    __slots__ = ("stake", "returned", "outcome")

    def __init__(self, stake, returned, outcome):
        self.stake, self.returned, self.outcome = stake, returned, outcome

    def to_dict(self) -> dict:
        return {"stake": fmt(self.stake), "returned": fmt(self.returned), "outcome": self.outcome}


_LATE_NOTE = "dealer blackjack after players acted (classic): only the original stake is lost, extra returned"


class BetResult(Bet):
    """The settlement of one bet: the parsed ``Bet`` of the record (``id``, ``player``, ``type``,
    ``seat`` (int|None), ``stake``: the original stake...) settled in place (``settle`` parses the
    bets as ``BetResult``: one object per bet, however many players a round has), with:

      path: boundless main: index into ``RoundResult.paths`` (else None);
      staked: original + every extra (double, split, insurance);
      returned: everything credited back (Decimal, minor units);
      outcome: main/behind on ONE hand: the hand outcome ``blackjack|win|push|lose|surrender``;
        on split hands: ``win|push|lose`` by comparing the hands' total return with their total
        stake (insurance excluded); side bets: ``win|lose``;
      extras: ``{"double": ..., "split": ..., "insurance": ...}`` extra stakes held (only kinds > 0);
      hands: list of ``HandResult`` (main / behind; empty for side bets);
      insurance: ``InsuranceResult`` or None;
      pattern / odds: side bets: the single pattern paid and its odds N (N:1), None when lost;
      explanation: human-readable "why was I paid this".
    """

    # _r = (amounts, ctx, plan, path), set by ``_settled`` and shared by every bet of the same
    # boundless path, stake and insurance: amounts = (staked, returned, outcome, extras, insurance,
    # pattern, odds); ctx = (rules, minor_units, late); plan: the hands' plan (main / behind).
    # _hands: built on first access (unset until then).
    __slots__ = ("_r", "_hands")

    staked = property(lambda self: self._r[0][0])
    returned = property(lambda self: self._r[0][1])
    outcome = property(lambda self: self._r[0][2])
    extras = property(lambda self: dict(self._r[0][3]))
    insurance = property(lambda self: self._r[0][4])
    pattern = property(lambda self: self._r[0][5])
    odds = property(lambda self: self._r[0][6])
    path = property(lambda self: self._r[3])

    @property
    def net(self) -> Decimal:
        """returned - staked (the player's win, negative for a loss)."""
        return self.returned - self.staked

    @property
    def hands(self) -> list:
        """Per-hand detail for this bet (built on first access, so a bet whose hands nobody reads
        costs nothing)."""
        try:
            return self._hands
        except AttributeError:
            _, ctx, plan, _ = self._r
            self._hands = [] if plan is None else hand_results(ctx[0], plan, self.stake, ctx[1], ctx[2])
            return self._hands

    @property
    def explanation(self) -> str:
        """How ``returned`` was computed, for operators ("why was I paid this")."""
        parts = []
        if self.type in ("main", "behind"):
            for i, h in enumerate(self.hands, 1):
                s = f"hand {i} {' '.join(h.cards)} ({h.score}) {h.outcome}"
                if h.odds is not None:
                    s += f" {h.odds}:1 on {h.stake}"
                elif h.outcome == "surrender":
                    s += f": half of {h.stake} rounded down"
                s += f" -> {h.returned}"
                if h.note:
                    s += f" ({h.note})"
                parts.append(s)
            if self.insurance:
                ins = self.insurance
                parts.append(f"insurance {ins.stake} {ins.outcome}"
                             + (f" 2:1 -> {ins.returned}" if ins.outcome == "win" else " -> 0"))
        else:
            if self.pattern:
                parts.append(f"{self.type} {self.pattern} {self.odds}:1 on {self.stake} -> {self.returned}")
            else:
                parts.append(f"{self.type}: no pattern -> 0")
        rounded = " (winnings rounded down)" if self._rounded() else ""
        parts.append(f"total returned {self.returned} of {self.staked} staked{rounded}")
        return "; ".join(parts)

    def _rounded(self) -> bool:
        """True when some winnings of this bet were rounded down to the minor unit (RULES 5): a
        paid hand or side bet returned less than its stake times (1 + odds)."""
        if self.type in ("main", "behind"):
            return any(h.odds is not None and h.returned != h.stake * (1 + Decimal(str(h.odds))) for h in self.hands)
        return self.pattern is not None and self.returned != self.stake * (1 + Decimal(str(self.odds)))

    def to_dict(self) -> dict:
        """JSON-able dict; money as decimal strings."""
        d = {"id": self.id, "player": self.player, "type": self.type, "stake": fmt(self.stake),
             "staked": fmt(self.staked), "returned": fmt(self.returned), "outcome": self.outcome,
             "extras": {k: fmt(v) for k, v in self.extras.items()}}
        if self.seat is not None:
            d["seat"] = self.seat
        if self.path is not None:
            d["path"] = self.path
        if self.type in ("main", "behind"):
            d["hands"] = [h.to_dict() for h in self.hands]
            d["insurance"] = self.insurance.to_dict() if self.insurance else None
        else:
            d["pattern"] = self.pattern
            d["odds"] = None if self.odds is None else str(self.odds)
        d["explanation"] = self.explanation
        return d


class RoundResult:
    """The settlement of a round.

    ``round``, ``variant``, ``currency``, ``shoe_round``, ``minor_units``; ``dealer_cards``,
    ``dealer_score``, ``dealer_blackjack``, ``dealer_bust``; ``ended_at_peek``;
    ``late_dealer_blackjack`` (classic RULES 5 rule applied); ``seats``: ``{seat: [PlayedHand]}``
    (classic/premium) or None; ``paths``: boundless list of ``{"actions": tuple, "hands":
    [PlayedHand]}`` or None; ``bets``: ``{bet id: BetResult}`` in record order.
    """

    def __init__(self, pr: ParsedRecord, bets: dict, seats=None, paths=None, ended_at_peek=False,
                 late=False):
        self.round = pr.round
        self.variant = pr.variant
        self.currency = pr.currency
        self.shoe_round = pr.shoe_round
        self.minor_units = pr.minor_units
        self.dealer_cards = pr.dealer
        self.dealer_score = score(pr.dealer)
        self.dealer_blackjack = is_blackjack(pr.dealer[:2])
        self.dealer_bust = self.dealer_score > 21
        self.seats = seats
        self.paths = paths
        self.ended_at_peek = ended_at_peek
        self.late_dealer_blackjack = late
        self.bets = bets

    @property
    def total_staked(self) -> Decimal:
        return sum((b.staked for b in self.bets.values()), ZERO)

    @property
    def total_returned(self) -> Decimal:
        return sum((b.returned for b in self.bets.values()), ZERO)

    def void_refunds(self) -> dict:
        """A void (RULES 10) refunds every bet its full ``staked`` (extras included): ``{id: staked}``."""
        return {k: b.staked for k, b in self.bets.items()}

    def to_dict(self) -> dict:
        """JSON-able result (docs/round-record.md "Result"); money as decimal strings."""
        d = {"round": self.round, "variant": self.variant, "currency": self.currency,
             "shoe_round": self.shoe_round,
             "dealer": {"cards": list(self.dealer_cards), "score": self.dealer_score,
                        "blackjack": self.dealer_blackjack, "bust": self.dealer_bust},
             "ended_at_peek": self.ended_at_peek,
             "late_dealer_blackjack": self.late_dealer_blackjack}
        if self.seats is not None:
            d["seats"] = {str(n): {"hands": [h.to_dict() for h in hands]} for n, hands in self.seats.items()}
        if self.paths is not None:
            d["paths"] = [{"actions": list(p["actions"]), "bets": p["bets"],
                           "hands": [h.to_dict() for h in p["hands"]]} for p in self.paths]
        d["bets"] = {k: b.to_dict() for k, b in self.bets.items()}
        d["totals"] = {"staked": fmt(self.total_staked), "returned": fmt(self.total_returned)}
        return d


# --------------------------------------------------------------------------- money per bet


def hand_results(rules: RuleSet, plan: tuple, s: Decimal, mu: int, late: bool) -> list:
    """The ``HandResult`` of each hand of a main / behind bet of original stake ``s`` from its
    ``plan`` (``((PlayedHand, stake multiple, late refund multiple, doubled), ...)``), in
    ``mu`` minor units; ``late``: the classic late dealer blackjack rule applies (RULES 5)."""
    res = []
    for h, m, r, d in plan:
        st = s * m if m != 1 else s
        refund = s * r if late else s * 0
        ret, odds = hand_return(rules, h.outcome, st, refund, mu)
        note = _LATE_NOTE if late and h.outcome == "lose" and r else None
        res.append(HandResult(h, st, ret, odds, d, note))
    return res
