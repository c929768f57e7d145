"""Round-record parsing and static validation (docs/round-record.md).

``parse_record(record, rules=None, minor_units=2) -> ParsedRecord`` checks everything that can be
checked without playing the round (shape, card codes, the 8-copies limit, bets). The replay
(``settling.settle``) then checks what needs play: action legality, cards left over / too few, the
dealer's draws. Every problem raises the ONE exception ``InvalidRecord``.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .cards import _CODES
from .money import parse_stake
from .rules import VARIANTS, RuleSet, ruleset

FORMAT = "round-record/1"
#: The fields a record, a seat and a bet may hold (docs/round-record.md "Fields"); any other is invalid.
RECORD_FIELDS = frozenset({"format", "variant", "round", "shoe_round", "currency", "dealer", "seats", "player_cards",
                           "bets"})
SEAT_FIELDS = frozenset({"cards", "actions"})
BET_FIELDS = frozenset({"id", "player", "type", "seat", "stake", "actions", "insurance", "follow_double",
                        "follow_split"})


def _known_fields(value: dict, fields: frozenset, path: str) -> None:
    """``InvalidRecord`` at ``<path>.<field>`` for the first field of ``value`` (by name) not in ``fields``."""
    if not value.keys() <= fields:
        unknown = min(str(key) for key in value.keys() - fields)
        raise InvalidRecord(f"{path}.{unknown}" if path else unknown,
                            f"unknown field (the known ones: {', '.join(sorted(fields))})")


class InvalidRecord(ValueError):
    """The round record is invalid; nothing may be settled from it (docs/round-record.md).

    ``path`` names the field (``"seats.1.actions[2]"``, ``"bets[3].stake"``, ``"dealer"``,
    ``"player_cards"``, ``"bets"``...), ``reason`` says why. ``str(e) == f"{path}: {reason}"``.
    """

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """One occupied seat: ``cards`` in dealt order and the owner's ``actions`` (tuples of str)."""
    cards: tuple
    actions: tuple


class Bet:
    """One parsed bet. ``stake`` is the ORIGINAL stake (Decimal, quantized to minor units);
    ``seat`` is an int or None; ``insured``: it took insurance; ``actions`` a tuple for boundless
    ``main`` bets, else None."""

    __slots__ = ("index", "id", "player", "type", "stake", "seat", "insured",
                 "follow_double", "follow_split", "actions")

    def __init__(self, index, id, player, type, stake, seat=None, insured=False,
                 follow_double=False, follow_split=False, actions=None):
        self.index = index
        self.id = id
        self.player = player
        self.type = type
        self.stake = stake
        self.seat = seat
        self.insured = insured
        self.follow_double = follow_double
        self.follow_split = follow_split
        self.actions = actions

    @property
    def field(self) -> str:
        """The bet's place in the record for error messages: ``bets[<index>]``."""
        return f"bets[{self.index}]"


@dataclass(slots=True)
class ParsedRecord:
    """A statically valid record: see docs/round-record.md for the fields."""
    rules: RuleSet
    variant: str
    round: object
    shoe_round: int
    currency: str | None
    minor_units: int
    dealer: tuple
    seats: dict | None          # {seat number: SeatRecord}, sorted by seat (classic/premium)
    player_cards: tuple | None  # boundless shared sequence c1, c2, c3...
    bets: list


def _cards(value, path: str) -> tuple:
    if not isinstance(value, list):
        raise InvalidRecord(path, "must be a list of card codes")
    out = []
    codes = _CODES
    for i, c in enumerate(value):
        n = codes.get(c) if isinstance(c, str) else None
        if n is None:
            raise InvalidRecord(f"{path}[{i}]", f"malformed card code {c!r}")
        out.append(n)
    return tuple(out)


def _actions(value, path: str) -> tuple:
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise InvalidRecord(path, "must be a list of action strings"
                            + (" (a boundless main bet needs an actions list)" if value is None else ""))
    return tuple(value)


def _bool(b: dict, key: str, path: str) -> bool:
    v = b.get(key, False)
    if v is None:
        return False
    if not isinstance(v, bool):
        raise InvalidRecord(f"{path}.{key}", f"must be true or false, got {v!r}")
    return v




def parse_record(record: object, rules: RuleSet | None = None, minor_units: int = 2, *,
                 bet_class: type = Bet) -> ParsedRecord:
    """Parse and statically validate a round record (a dict decoded from JSON).

    Args:
      record: the round record (docs/round-record.md "Shape").
      rules: the table's ``RuleSet`` (pay tables may be overridden); default ``ruleset(variant)``.
        Its variant must equal the record's.
      minor_units: decimals of the currency (stakes with more decimals are invalid).
      bet_class: ``Bet`` or a subclass to build the bets as (``results.BetResult``: each bet is
        then settled in place, one object per bet however many players a round has).
    Returns a ``ParsedRecord``. Raises ``InvalidRecord(path, reason)``.
    """
    if not isinstance(record, dict):
        raise InvalidRecord("record", "must be a JSON object")
    if record.get("format") != FORMAT:
        raise InvalidRecord("format", f"unknown format {record.get('format')!r} (expected {FORMAT!r})")
    _known_fields(record, RECORD_FIELDS, "")
    variant = record.get("variant")
    if variant not in VARIANTS:
        raise InvalidRecord("variant", f"unknown variant {variant!r}")
    if rules is None:
        rules = ruleset(variant)
    elif rules.variant != variant:
        raise InvalidRecord("variant", f"record is {variant} but the table plays {rules.variant}")
    shoe_round = record.get("shoe_round")
    if not isinstance(shoe_round, int) or isinstance(shoe_round, bool) or shoe_round < 1:
        raise InvalidRecord("shoe_round", f"must be a positive integer, got {shoe_round!r}")
    currency = record.get("currency")
    if currency is not None and not isinstance(currency, str):
        raise InvalidRecord("currency", "must be a string")

    dealer = _cards(record.get("dealer"), "dealer")
    if len(dealer) < 2:
        raise InvalidRecord("dealer", f"too few cards: the dealer needs at least 2, has {len(dealer)}")

    counts: Counter = Counter(dealer)
    located = [("dealer", dealer)]
    seats = None
    player_cards = None
    if rules.shared_hand:
        if "seats" in record:
            raise InvalidRecord("seats", f"not used in {variant} (use player_cards)")
        player_cards = _cards(record.get("player_cards"), "player_cards")
        if len(player_cards) < 2:
            raise InvalidRecord("player_cards", f"too few cards: at least 2 needed, got {len(player_cards)}")
        counts.update(player_cards)
        located.append(("player_cards", player_cards))
    else:
        if "player_cards" in record:
            raise InvalidRecord("player_cards", f"not used in {variant} (use seats)")
        raw = record.get("seats")
        if not isinstance(raw, dict):
            raise InvalidRecord("seats", "must be an object seat number -> {cards, actions}")
        seats = {}
        for key, s in raw.items():
            path = f"seats.{key}"
            if not (isinstance(key, str) and key.isdigit() and 1 <= int(key) <= rules.seats
                    and str(int(key)) == key):
                raise InvalidRecord(path, f"not a seat number 1-{rules.seats}")
            if not isinstance(s, dict):
                raise InvalidRecord(path, "must be an object with cards and actions")
            _known_fields(s, SEAT_FIELDS, path)
            cards = _cards(s.get("cards"), f"{path}.cards")
            if len(cards) < 2:
                raise InvalidRecord(f"{path}.cards", f"too few cards: a seat needs at least 2, has {len(cards)}")
            actions = _actions(s.get("actions", []), f"{path}.actions")
            seats[int(key)] = SeatRecord(cards, actions)
            counts.update(cards)
            located.append((f"{path}.cards", cards))
        seats = dict(sorted(seats.items()))

    over = [c for c, n in counts.items() if n > rules.decks]
    if over:
        card = over[0]
        seen = 0
        for path, cards in located:
            for i, c in enumerate(cards):
                if c == card:
                    seen += 1
                    if seen > rules.decks:
                        raise InvalidRecord(f"{path}[{i}]", f"card {card} appears more than {rules.decks} times")

    bets = _parse_bets(record.get("bets"), rules, shoe_round, dealer, seats, minor_units, bet_class)
    return ParsedRecord(rules=rules, variant=variant, round=record.get("round"), shoe_round=shoe_round,
                        currency=currency, minor_units=minor_units, dealer=dealer, seats=seats,
                        player_cards=player_cards, bets=bets)


def _parse_bets(raw, rules: RuleSet, shoe_round: int, dealer: tuple, seats: dict | None,
                minor_units: int, bet_class: type) -> list:
    if not isinstance(raw, list):
        raise InvalidRecord("bets", "must be a list of bets")
    variant = rules.variant
    shared = rules.shared_hand
    dealer_ace = dealer[0][0] == "A"
    offered = {t: rules.offered(t, shoe_round) for t in rules.bet_types}
    stake_cache: dict = {}
    ids: set = set()
    bets = []
    fast_main = shared and offered.get("main", False)
    good_actions: dict = {}
    main_by_seat: dict = {}
    seats_by_player: dict = {}
    append = bets.append
    for i, b in enumerate(raw):
        if type(b) is not dict:
            raise InvalidRecord(f"bets[{i}]", "must be an object")
        bid = b.get("id")
        player = b.get("player")
        t = b.get("type")
        s = b.get("stake")
        if type(bid) is not str or not bid or bid in ids:
            if isinstance(bid, str) and bid in ids:
                raise InvalidRecord(f"bets[{i}].id", f"duplicate bet id {bid!r}")
            raise InvalidRecord(f"bets[{i}].id", "must be a non-empty string")
        ids.add(bid)
        if type(player) is not str or not player:
            raise InvalidRecord(f"bets[{i}].player", "must be a non-empty string")
        stake = stake_cache.get(s) if type(s) is str else None
        if stake is None:
            try:
                stake = parse_stake(s, minor_units)
            except ValueError as e:
                raise InvalidRecord(f"bets[{i}].stake", str(e)) from None
            stake_cache[s] = stake
        if fast_main and t == "main" and (len(b) == 5 or (len(b) == 6 and "insurance" in b)):
            # boundless main fast path (a round's many main bets); keys exactly id, player, type,
            # stake, actions (+ insurance); anything unusual takes the full path below
            a = b.get("actions")
            ins = b.get("insurance", False)
            if type(a) is list and (ins is False or ins is None or (ins is True and dealer_ace)):
                ta = tuple(a)
                try:
                    known = good_actions.get(ta)  # one shared tuple per distinct action list
                except TypeError:
                    known = None
                if known is None and all(type(x) is str for x in ta):
                    known = good_actions[ta] = ta
                if known is not None:
                    append(bet_class(i, bid, player, t, stake, None, ins is True, False, False, known))
                    continue
        path = f"bets[{i}]"
        _known_fields(b, BET_FIELDS, path)
        ok = offered.get(t) if isinstance(t, str) else None
        if not ok:
            if ok is None:
                raise InvalidRecord(f"{path}.type", f"bet type {t!r} not offered in {variant}")
            raise InvalidRecord(f"{path}.type", f"{t} only offered up to shoe round "
                                f"{rules.last_shoe_round[t]} (this is round {shoe_round})")
        insurance = False
        if t == "main" or t == "behind":
            ins = b.get("insurance", False)
            if ins is True:
                if not dealer_ace:
                    raise InvalidRecord(f"{path}.insurance",
                                        f"insurance not offered: the dealer's first card is {dealer[0]}, not an ace")
                insurance = True
            elif ins is not False and ins is not None:
                raise InvalidRecord(f"{path}.insurance", f"must be true or false, got {ins!r}")
        elif "insurance" in b and b["insurance"] not in (False, None):
            raise InvalidRecord(f"{path}.insurance", f"no insurance on a {t} bet")
        if t != "behind":
            for k in ("follow_double", "follow_split"):
                if k in b and b[k] not in (False, None):
                    raise InvalidRecord(f"{path}.{k}", f"only a behind bet follows a seat, not {t}")
        actions = None
        if shared:
            if "seat" in b and b["seat"] is not None:
                raise InvalidRecord(f"{path}.seat", f"no seats in {variant}")
            if t == "main":
                actions = _actions(b.get("actions"), f"{path}.actions")
            elif "actions" in b:
                raise InvalidRecord(f"{path}.actions", f"no actions on a {t} bet")
            bets.append(bet_class(i, bid, player, t, stake, None, insurance, False, False, actions))
            continue
        # seated variants
        if "actions" in b:
            raise InvalidRecord(f"{path}.actions", f"actions belong to seats.N.actions in {variant}")
        seat = b.get("seat")
        if not isinstance(seat, int) or isinstance(seat, bool):
            raise InvalidRecord(f"{path}.seat", f"a {t} bet needs a seat number, got {seat!r}")
        if seat not in seats:
            raise InvalidRecord(f"{path}.seat", f"seat {seat} has no cards")
        fd = fs = False
        if t == "main":
            if seat in main_by_seat:
                raise InvalidRecord(f"{path}.seat", f"seat {seat} already has a main bet "
                                    f"({main_by_seat[seat].id})")
            held = seats_by_player.setdefault(player, [])
            if len(held) >= rules.seats_per_player:
                raise InvalidRecord(f"{path}.seat", f"player {player} already holds "
                                    f"{rules.seats_per_player} seat(s) in {variant}")
            if held and held[0].stake != stake:
                raise InvalidRecord(f"{path}.stake", f"stakes on a player's two seats must be equal "
                                    f"({held[0].stake} on seat {held[0].seat})")
        elif t == "behind":
            fd = _bool(b, "follow_double", path)
            fs = _bool(b, "follow_split", path)
        bet = bet_class(i, bid, player, t, stake, seat, insurance, fd, fs, None)
        if t == "main":
            main_by_seat[seat] = bet
            seats_by_player[player].append(bet)
        bets.append(bet)
    if not shared:
        for n in seats:
            if n not in main_by_seat:
                raise InvalidRecord(f"seats.{n}", "occupied seat without a main bet")
        for bet in bets:
            if bet.type != "behind":
                continue
            own = seats_by_player.get(bet.player)
            if own and not rules.seated_may_bet_behind:
                raise InvalidRecord(f"{bet.field}.player", f"a seated player may not bet behind in {variant}")
            if own and any(m.seat == bet.seat for m in own):
                raise InvalidRecord(f"{bet.field}.seat", "a player may not bet behind their own seat")
    return bets
