"""The three variants as data (docs/rules.md: the table of the variants, and RULES 3-9).

``RuleSet`` is a frozen dataclass; ``ruleset(variant, pay_tables=None)`` builds one, with the pay
tables optionally overridden per table (operators edit them).

Pay tables are data: ``{bet_type: {pattern: odds}}`` where odds ``N`` means ``N:1`` = the winning
bet returns ``stake + stake * N`` (rounded down to the minor unit). Pattern names are stable
snake_case strings (they are stored in the database and shown by the API).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType

VARIANTS = ("classic", "premium", "boundless")
#: The version of the rules this engine settles by (docs/rules.md and its [decision]s): raised with
#: any change to how a round is played or paid. Each round keeps the version it opened under
#: (``Round.rules_version``), for its game record.
RULES_VERSION = "1"
ACTIONS = frozenset({"hit", "stand", "double", "split", "surrender"})

D = Decimal

#: Default pay tables per bet type (RULES 5 main bet, 4 insurance, 8 side bets). Odds N:1.
DEFAULT_PAY_TABLES: Mapping[str, Mapping[str, Decimal]] = {
    # RULES 5: blackjack 3:2, win 1:1 (push / surrender are not odds: stake / half stake)
    "main": {"blackjack": D("1.5"), "win": D(1)},
    # RULES 4: insurance 2:1
    "insurance": {"win": D(2)},
    # RULES 8 classic: same rank 11:1
    "pair": {"pair": D(11)},
    # RULES 8 premium / boundless (suited_trips only in premium)
    "pairs": {"mixed_pair": D(5), "coloured_pair": D(10), "perfect_pair": D(30), "suited_trips": D(50)},
    # RULES 8 boundless: by number of cards in the busted dealer hand
    "bust_bonus": {"bust_3_cards": D(1), "bust_4_cards": D(2), "bust_5_cards": D(9),
                   "bust_6_cards": D(50), "bust_7_cards": D(100), "bust_8_plus_cards": D(250)},
    # RULES 8 boundless: player's two cards + dealer's first card
    "lucky_trio": {"total_19_or_20": D(2), "total_21": D(3), "suited_21": D(10),
                   "six_seven_eight": D(30), "seven_seven_seven": D(50),
                   "suited_six_seven_eight": D(100), "suited_seven_seven_seven": D(200)},
    "poker_trio": {"flush": D(5), "straight": D(10), "three_of_a_kind": D(30),
                   "straight_flush": D(40), "suited_trips": D(100)},
}

SIDE_BETS = frozenset({"pair", "pairs", "bust_bonus", "lucky_trio", "poker_trio"})


@dataclass(frozen=True)
class RuleSet:
    """Everything that differs between variants, as data (RULES 1-9).

    Fields:
      variant: ``"classic" | "premium" | "boundless"``.
      decks: decks in the shoe (8, RULES 1).
      deal_order: ``"seats_dealer_seats"`` (classic: dealer gets one card, second after players),
        ``"seats_dealer_seats_dealer"`` (premium, hole card), ``"shared"`` (boundless P D P D).
      hole_card / peek: dealer's second card dealt face down before decisions and checked for
        blackjack (premium, boundless). ``peek`` ends the round at once on a dealer BJ (RULES 3).
      end_if_all_blackjack: premium also ends at once when every seated hand is BJ (RULES 3).
      dealer_always_completes: boundless dealer draws to 17 even if no hand is live (RULES 3).
      late_bj_returns_extras: classic [decision] RULES 5: on a dealer BJ found after players acted,
        only original stakes are lost; extra stakes of doubles and second split hands are returned.
      actions: actions the variant offers (RULES 4; all five in every variant).
      double_fallback: insufficient balance for a double: ``"hit"`` (premium) or
        ``"hit_if_11_or_less"`` (classic [decision], boundless) (RULES 4).
      split_fallback: always ``"hit_if_11_or_less"`` (RULES 4).
      double_after_split / resplit / double_split_aces: RULES 4 (True / False / False).
      surrender_against: dealer first-card values (ace=1) against which surrender is allowed (2-9).
      dealer_stands_soft_17: S17 (RULES 3).
      bet_types: bet types offered (``main``, ``behind``, side bets).
      pay_tables: ``{bet_type: {pattern: Decimal odds}}`` (read-only mappings).
      last_shoe_round: ``{bet_type: last shoe round offered}`` (boundless: pairs 40, others 45).
      seats: number of seats (7) or None (boundless, unlimited players).
      seats_per_player: 1 (classic), 2 (premium, mirrored stakes), None (boundless).
      bet_behind: bet behind offered (classic, premium; RULES 6).
      seated_may_bet_behind: premium True (never on own seat), classic False (RULES 6).
      reshuffle_on_host_disconnect: classic: a round voided on a host-system disconnection
        reshuffles the whole shoe (RULES 10).
      max_rtp: published maximum RTP in percent.
    """

    variant: str
    decks: int
    deal_order: str
    hole_card: bool
    peek: bool
    end_if_all_blackjack: bool
    dealer_always_completes: bool
    late_bj_returns_extras: bool
    actions: frozenset
    double_fallback: str
    split_fallback: str
    double_after_split: bool
    resplit: bool
    double_split_aces: bool
    surrender_against: frozenset
    dealer_stands_soft_17: bool
    bet_types: frozenset
    pay_tables: Mapping[str, Mapping[str, Decimal]] = field(hash=False, compare=True)
    last_shoe_round: Mapping[str, int] = field(hash=False, compare=True)
    seats: int | None
    seats_per_player: int | None
    bet_behind: bool
    seated_may_bet_behind: bool
    reshuffle_on_host_disconnect: bool
    max_rtp: Decimal

    @property
    def shared_hand(self) -> bool:
        """Boundless: one shared player hand, each player deciding alone (RULES 7)."""
        return self.deal_order == "shared"

    def odds(self, bet_type: str, pattern: str) -> Decimal:
        """Odds N (of N:1) for ``pattern`` of ``bet_type``; ``KeyError`` if unknown."""
        return self.pay_tables[bet_type][pattern]

    def max_multiple(self, bet_type: str) -> Decimal:
        """Largest return / stake a bet of this type can reach (1 + highest odds)."""
        return 1 + max(self.pay_tables[bet_type].values())

    def offered(self, bet_type: str, shoe_round: int) -> bool:
        """Is ``bet_type`` offered in this shoe round (RULES 8 shoe-round limits)?"""
        if bet_type not in self.bet_types:
            return False
        last = self.last_shoe_round.get(bet_type)
        return last is None or shoe_round <= last


def _freeze(tables: dict) -> Mapping[str, Mapping[str, Decimal]]:
    return MappingProxyType({k: MappingProxyType(dict(v)) for k, v in tables.items()})


_BASE = dict(
    decks=8, actions=ACTIONS, split_fallback="hit_if_11_or_less", double_after_split=True,
    resplit=False, double_split_aces=False, surrender_against=frozenset(range(2, 10)),
    dealer_stands_soft_17=True,
)

_VARIANT_DATA = {
    "classic": dict(
        deal_order="seats_dealer_seats", hole_card=False, peek=False, end_if_all_blackjack=False,
        dealer_always_completes=False, late_bj_returns_extras=True,
        double_fallback="hit_if_11_or_less",
        bet_types=frozenset({"main", "behind", "pair"}), side_bets=("pair",), last={},
        seats=7, seats_per_player=1, bet_behind=True, seated_may_bet_behind=False,
        reshuffle_on_host_disconnect=True, max_rtp=D("99.54"), pairs_patterns=None,
    ),
    "premium": dict(
        deal_order="seats_dealer_seats_dealer", hole_card=True, peek=True, end_if_all_blackjack=True,
        dealer_always_completes=False, late_bj_returns_extras=False, double_fallback="hit",
        bet_types=frozenset({"main", "behind", "pairs"}), side_bets=("pairs",), last={},
        seats=7, seats_per_player=2, bet_behind=True, seated_may_bet_behind=True,
        reshuffle_on_host_disconnect=False, max_rtp=D("99.53"),
        pairs_patterns=("mixed_pair", "coloured_pair", "perfect_pair", "suited_trips"),
    ),
    "boundless": dict(
        deal_order="shared", hole_card=True, peek=True, end_if_all_blackjack=False,
        dealer_always_completes=True, late_bj_returns_extras=False,
        double_fallback="hit_if_11_or_less",
        bet_types=frozenset({"main", "pairs", "bust_bonus", "lucky_trio", "poker_trio"}),
        side_bets=("pairs", "bust_bonus", "lucky_trio", "poker_trio"),
        last={"pairs": 40, "bust_bonus": 45, "lucky_trio": 45, "poker_trio": 45},
        seats=None, seats_per_player=None, bet_behind=False, seated_may_bet_behind=False,
        reshuffle_on_host_disconnect=False, max_rtp=D("99.46"),
        pairs_patterns=("mixed_pair", "coloured_pair", "perfect_pair"),
    ),
}


def default_pay_tables(variant: str) -> dict[str, dict[str, Decimal]]:
    """Default pay tables of ``variant``: main, insurance and its side bets (RULES 5, 8)."""
    data = _VARIANT_DATA[variant]
    tables = {"main": dict(DEFAULT_PAY_TABLES["main"]), "insurance": dict(DEFAULT_PAY_TABLES["insurance"])}
    for sb in data["side_bets"]:
        t = dict(DEFAULT_PAY_TABLES[sb])
        if sb == "pairs":
            t = {k: t[k] for k in data["pairs_patterns"]}
        tables[sb] = t
    return tables


def _odds(value: object, where: str) -> Decimal:
    if isinstance(value, bool) or isinstance(value, float):
        raise ValueError(f"{where}: odds must be an int, Decimal or decimal string, not {value!r}")
    try:
        d = Decimal(value) if isinstance(value, (int, str, Decimal)) else None
    except Exception:
        d = None
    if d is None or not d.is_finite() or d <= 0:
        raise ValueError(f"{where}: odds must be a positive number, got {value!r}")
    return d


_CACHE: dict[str, RuleSet] = {}


def ruleset(variant: str, pay_tables: Mapping[str, Mapping[str, object]] | None = None) -> RuleSet:
    """Return the ``RuleSet`` of ``variant`` (``classic | premium | boundless``).

    ``pay_tables`` overrides odds per table: ``{"pairs": {"mixed_pair": 6}}`` replaces only the
    listed patterns; the others keep their defaults. Odds are ``int``, ``Decimal`` or decimal
    strings (no float), strictly positive. Raises ``ValueError`` for an unknown variant, a bet
    type the variant does not pay, an unknown pattern, or bad odds.
    """
    if variant not in _VARIANT_DATA:
        raise ValueError(f"unknown variant {variant!r}")
    if not pay_tables and variant in _CACHE:
        return _CACHE[variant]
    data = _VARIANT_DATA[variant]
    tables = default_pay_tables(variant)
    if pay_tables is not None and not isinstance(pay_tables, Mapping):
        raise ValueError("pay_tables: must be a mapping bet type -> {pattern: odds}")
    for bet_type, overrides in (pay_tables or {}).items():
        if bet_type not in tables:
            raise ValueError(f"pay_tables.{bet_type}: not a paying bet type of {variant}")
        if not isinstance(overrides, Mapping):
            raise ValueError(f"pay_tables.{bet_type}: must be a mapping pattern -> odds")
        for pattern, value in overrides.items():
            if pattern not in tables[bet_type]:
                raise ValueError(f"pay_tables.{bet_type}.{pattern}: unknown pattern")
            tables[bet_type][pattern] = _odds(value, f"pay_tables.{bet_type}.{pattern}")
    rs = RuleSet(
        variant=variant, pay_tables=_freeze(tables),
        last_shoe_round=MappingProxyType(dict(data["last"])),
        **_BASE,
        **{k: v for k, v in data.items() if k not in ("side_bets", "last", "pairs_patterns")},
    )
    if not pay_tables:
        _CACHE[variant] = rs
    return rs
