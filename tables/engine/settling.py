"""Settle a round record: validate, replay, pay every bet (RULES 3-8, docs/round-record.md).

``settle(record, *, rules=None, minor_units=2) -> RoundResult`` is the entry point the back office
uses. Boundless rounds group players who took the same actions: each distinct path is replayed
ONCE and every bet on it is paid on its own stake (rounding per bet); ``settle_naive`` replays
each player separately (reference implementation for tests and the benchmark). The result types
are ``results``.
"""
from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from . import sidebets
from .hand import is_blackjack, score
from .handplay import HandPlay, dealer_cards_needed, play_hands
from .legal import why_illegal
from .money import round_down
from .payouts import hand_return, insurance_return, insurance_stake
from .record import InvalidRecord, ParsedRecord, parse_record
from .results import BetResult, InsuranceResult, PlayedHand, RoundResult
from .rules import RuleSet

# --------------------------------------------------------------------------- money per bet

def _plan_main(hands: list) -> tuple:
    """Plan of a main bet: ``((hand, stake multiple, late refund multiple, doubled), ...)``."""
    out = []
    for i, h in enumerate(hands):
        m = 2 if h.doubled else 1
        out.append((h, m, m - (1 if i == 0 else 0), h.doubled))
    return tuple(out)


def _plan_behind(hands: list, follow_double: bool, follow_split: bool) -> tuple:
    """Plan of a bet behind, as ``_plan_main``'s (RULES 6): not following a split rides the FIRST
    hand only; not following a double keeps the original stake on the same (three-card) hand."""
    out = []
    for i, h in enumerate(hands if follow_split else hands[:1]):
        d = h.doubled and follow_double
        m = 2 if d else 1
        out.append((h, m, m - (1 if i == 0 else 0), d))
    return tuple(out)


def _amounts(rules: RuleSet, plan: tuple, s: Decimal, insured: bool, dealer_bj: bool, mu: int,
             late: bool) -> tuple:
    """``(staked, returned, outcome, extras, InsuranceResult|None, pattern, odds)`` of a main /
    behind bet (pattern and odds None: they are the side bets')."""
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
    """Validate and settle one round record (docs/round-record.md; RULES 1-8).

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
