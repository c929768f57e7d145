"""Settle a round record: validate, replay, pay every bet (RULES.md 3-8, ROUND_RECORD.md).

``settle(record, *, rules=None, minor_units=2) -> RoundResult`` is the entry point the back office
uses. Boundless rounds group players who took the same actions: each distinct path is replayed
ONCE and every bet on it is paid on its own stake (rounding per bet); ``settle_naive`` replays
each player separately (reference implementation for tests and the benchmark).
"""
from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from . import sidebets
from .hand import hand_value, is_blackjack, score
from .handplay import HandPlay, dealer_cards_needed, play_hands
from .legal import why_illegal
from .money import fmt, round_down
from .payouts import hand_outcome, hand_return, insurance_return, insurance_stake
from .record import Bet, InvalidRecord, ParsedRecord, parse_record
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
    bets as ``BetResult``: one object per bet, for rounds of 20,000 players), with:

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
        """Per-hand detail for this bet (built on first access; cheap for 20,000 bets)."""
        try:
            return self._hands
        except AttributeError:
            _, ctx, plan, _ = self._r
            self._hands = [] if plan is None else _hand_results(ctx[0], plan, self.stake, ctx[1], ctx[2])
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
        parts.append(f"total returned {self.returned} of {self.staked} staked (winnings rounded down)")
        return "; ".join(parts)

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
        """JSON-able result (ROUND_RECORD.md "Result"); money as decimal strings."""
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

def _plan_main(hands: list) -> tuple:
    """Plan of a main bet: ``((hand, stake multiple, late refund multiple), ...)``."""
    out = []
    for i, h in enumerate(hands):
        m = 2 if h.doubled else 1
        out.append((h, m, m - (1 if i == 0 else 0), h.doubled))
    return tuple(out)


def _plan_behind(hands: list, follow_double: bool, follow_split: bool) -> tuple:
    """RULES 6: not following a split rides the FIRST hand only; not following a double keeps the
    original stake on the same (three-card) hand."""
    out = []
    for i, h in enumerate(hands if follow_split else hands[:1]):
        d = h.doubled and follow_double
        m = 2 if d else 1
        out.append((h, m, m - (1 if i == 0 else 0), d))
    return tuple(out)


def _hand_results(rules: RuleSet, plan: tuple, s: Decimal, mu: int, late: bool) -> list:
    res = []
    for h, m, r, d in plan:
        st = s * m if m != 1 else s
        refund = s * r if late else s * 0
        ret, odds = hand_return(rules, h.outcome, st, refund, mu)
        note = _LATE_NOTE if late and h.outcome == "lose" and r else None
        res.append(HandResult(h, st, ret, odds, d, note))
    return res


def _amounts(rules: RuleSet, plan: tuple, s: Decimal, insured: bool, dealer_bj: bool, mu: int,
             late: bool) -> tuple:
    """(staked, returned, outcome, extras, InsuranceResult|None) of a main / behind bet."""
    staked = returned = dbl = spl = s * 0
    for h, m, r, d in plan:
        st = s * m if m != 1 else s
        ret, _ = hand_return(rules, h.outcome, st, s * r if late else s * 0, mu)
        staked += st
        returned += ret
        if d:
            dbl += s
        if h.second:
            spl += s
    if len(plan) == 1:
        outcome = plan[0][0].outcome
    else:
        outcome = "win" if returned > staked else "push" if returned == staked else "lose"
    extras = {}
    if dbl:
        extras["double"] = dbl
    if spl:
        extras["split"] = spl
    ins = None
    if insured:
        ist = insurance_stake(s, mu)
        if ist > 0:  # half of one minor unit rounds down to nothing: no insurance [decision]
            iret = insurance_return(rules, ist, dealer_bj, mu)
            ins = InsuranceResult(ist, iret, "win" if dealer_bj else "lose")
            extras["insurance"] = ist
            staked += ist
            returned += iret
    return staked, returned, outcome, extras, ins, None, None


def _settled(bet: BetResult, amounts: tuple, ctx=None, plan=None, path=None) -> BetResult:
    """Settle ``bet`` in place (see ``BetResult``'s slots) and return it."""
    bet._r = (amounts, ctx, plan, path)
    return bet


def _side(bet: BetResult, pattern, odds, mu: int) -> BetResult:
    s = bet.stake
    ret = s + round_down(s * odds, mu) if pattern else s * 0
    return _settled(bet, (s, ret, "win" if pattern else "lose", {}, None, pattern, odds))


# --------------------------------------------------------------------------- replay

def _make_decide(rules: RuleSet, actions: tuple, up: str, apath: str, counter: list):
    n = len(actions)

    def decide(h: HandPlay, i: int):
        k = counter[0]
        if k >= n:
            return None
        a = actions[k]
        reason = why_illegal(rules, a, h.cards, up, split=h.split, split_aces=h.split_aces,
                             actions=h.actions, finished=h.finished)
        if reason:
            raise InvalidRecord(f"{apath}[{k}]", reason)
        counter[0] = k + 1
        return a
    return decide


def _make_draw(cards: tuple, cpath: str, pos: list, who: str):
    n = len(cards)

    def draw():
        k = pos[0]
        if k >= n:
            raise InvalidRecord(cpath, f"too few cards for the actions of {who}")
        pos[0] = k + 1
        return cards[k]
    return draw


def _leftover_actions(actions: tuple, k: int, apath: str, peek_end: bool):
    if k < len(actions):
        why = ("the round ended at the peek (dealer blackjack)" if peek_end
               else "no hand left in play (all hands finished)")
        raise InvalidRecord(f"{apath}[{k}]", f"{actions[k]} not allowed: {why}")


def _check_dealer(rules: RuleSet, dealer: tuple, any_live: bool):
    need = dealer_cards_needed(rules, dealer, any_live)
    if need > len(dealer):
        raise InvalidRecord("dealer", f"too few cards: the dealer must draw on {score(dealer)}")
    if need < len(dealer):
        raise InvalidRecord("dealer", f"too many cards: the dealer stops after {need} cards "
                            f"({score(dealer[:need])}), the record has {len(dealer)}")


def _settle_seated(pr: ParsedRecord) -> RoundResult:
    rules, dealer, mu = pr.rules, pr.dealer, pr.minor_units
    up = dealer[0]
    dealer_bj = is_blackjack(dealer[:2])
    peek_end = rules.peek and dealer_bj
    played = {}
    for n, seat in pr.seats.items():
        cpath, apath = f"seats.{n}.cards", f"seats.{n}.actions"
        pos, counter = [2], [0]
        hands = play_hands(rules, seat.cards[:2], _make_draw(seat.cards, cpath, pos, f"seat {n}"),
                           _make_decide(rules, seat.actions, up, apath, counter), round_over=peek_end)
        _leftover_actions(seat.actions, counter[0], apath, peek_end)
        if pos[0] < len(seat.cards):
            raise InvalidRecord(cpath, f"{len(seat.cards) - pos[0]} card(s) left over")
        played[n] = hands
    any_live = any(h.live for hands in played.values() for h in hands)
    _check_dealer(rules, dealer, any_live)
    ds = score(dealer)
    seats = {n: [PlayedHand(h, ds, dealer_bj) for h in hands] for n, hands in played.items()}
    late = rules.late_bj_returns_extras and dealer_bj
    ctx = (rules, mu, late)
    results = {}
    for bet in pr.bets:
        t = bet.type
        if t == "main" or t == "behind":
            hs = seats[bet.seat]
            plan = _plan_main(hs) if t == "main" else _plan_behind(hs, bet.follow_double, bet.follow_split)
            amounts = _amounts(rules, plan, bet.stake, bet.insured, dealer_bj, mu, late)
            results[bet.id] = _settled(bet, amounts, ctx, plan)
        else:
            c = pr.seats[bet.seat].cards
            if t == "pair":
                pat, odds = sidebets.pair(rules, c[0], c[1])
            else:
                pat, odds = sidebets.pairs(rules, c[0], c[1], up)
            results[bet.id] = _side(bet, pat, odds, mu)
    return RoundResult(pr, results, seats=seats, ended_at_peek=peek_end, late=late)


def _settle_boundless(pr: ParsedRecord, grouped: bool = True) -> RoundResult:
    rules, dealer, mu, pc = pr.rules, pr.dealer, pr.minor_units, pr.player_cards
    up = dealer[0]
    dealer_bj = is_blackjack(dealer[:2])
    peek_end = rules.peek and dealer_bj
    initial = pc[:2]
    _check_dealer(rules, dealer, True)
    ds = score(dealer)
    side = {}
    c1, c2 = initial
    tables = rules.pay_tables
    if "pairs" in tables:
        side["pairs"] = sidebets.pairs(rules, c1, c2, None)
    if "bust_bonus" in tables:
        side["bust_bonus"] = sidebets.bust_bonus(rules, dealer)
    if "lucky_trio" in tables:
        side["lucky_trio"] = sidebets.lucky_trio(rules, c1, c2, up)
    if "poker_trio" in tables:
        side["poker_trio"] = sidebets.poker_trio(rules, c1, c2, up)
    paths: list = []   # {"actions", "hands": [PlayedHand], "bets": number of bets}
    path_of: dict = {}  # actions -> (path index, plan)
    # grouped: every bet on the same path with the same stake and insurance flag is settled alike
    # (rounding is per bet on its own stake, so equal stakes round equally):
    # (actions, stake, insurance) -> [their shared BetResult._r, number of bets]
    settled_as: dict = {}
    max_pos = 2
    results = {}
    late = False
    ctx = (rules, mu, late)
    for bet in pr.bets:
        if bet.type != "main":
            pat, odds = side[bet.type]
            results[bet.id] = _side(bet, pat, odds, mu)
            continue
        group = (bet.actions, bet.stake, bet.insured)
        shared = settled_as.get(group) if grouped else None
        if shared is None:
            key = bet.actions
            known = path_of.get(key) if grouped else None
            if known is None:
                pos, counter = [2], [0]
                apath = f"{bet.field}.actions"
                hands = play_hands(rules, initial, _make_draw(pc, "player_cards", pos, bet.field),
                                   _make_decide(rules, key, up, apath, counter), round_over=peek_end)
                _leftover_actions(key, counter[0], apath, peek_end)
                if pos[0] > max_pos:
                    max_pos = pos[0]
                ph = [PlayedHand(h, ds, dealer_bj) for h in hands]
                known = (len(paths), _plan_main(ph))
                paths.append({"actions": key, "hands": ph, "bets": 0})
                if grouped:
                    path_of[key] = known
            p, plan = known
            shared = [(_amounts(rules, plan, bet.stake, bet.insured, dealer_bj, mu, late), ctx, plan, p), 0]
            if grouped:
                settled_as[group] = shared
            else:
                paths[p]["bets"] += 1
        shared[1] += 1
        bet._r = shared[0]
        results[bet.id] = bet
    for r, n in settled_as.values():
        paths[r[3]]["bets"] += n
    if max_pos < len(pc):
        raise InvalidRecord("player_cards", f"{len(pc) - max_pos} card(s) left over "
                            f"(no player took them)")
    return RoundResult(pr, results, paths=paths, ended_at_peek=peek_end)


def settle(record: Mapping, *, rules: RuleSet | None = None, minor_units: int = 2) -> RoundResult:
    """Validate and settle one round record (ROUND_RECORD.md; RULES.md 1-8).

    Args:
      record: the round record as decoded JSON (dict); stakes are decimal strings.
      rules: the table's ``RuleSet`` (e.g. ``ruleset("premium", pay_tables=...)``); default the
        variant's defaults. Must match the record's variant.
      minor_units: decimals of the currency (2 for EUR); amounts round DOWN to it.
    Returns a ``RoundResult``; ``result.bets[bet_id]`` is a ``BetResult`` (``staked``,
    ``returned``... as Decimal). Raises ``InvalidRecord(path, reason)``; nothing is settled then.
    """
    pr = parse_record(record, rules, minor_units, bet_class=BetResult)
    if pr.rules.shared_hand:
        return _settle_boundless(pr, grouped=True)
    return _settle_seated(pr)


def settle_naive(record: Mapping, *, rules: RuleSet | None = None, minor_units: int = 2) -> RoundResult:
    """Like ``settle`` but a boundless record is replayed once PER PLAYER (no grouping, no
    caching). Reference for tests and the benchmark; results are identical to ``settle``."""
    pr = parse_record(record, rules, minor_units, bet_class=BetResult)
    if pr.rules.shared_hand:
        return _settle_boundless(pr, grouped=False)
    return _settle_seated(pr)
