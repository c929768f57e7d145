"""Analysis parameters of the exact RTP analyzer (RULES 1, 3, 4, 5).

``AnalysisRules`` is the small, frozen set of main-game settings the analyzer needs. It can be
built for a variant by name (``analysis_rules_for``) or from the engine's ``RuleSet``
(``tables.engine.rules``), whose attributes are read, never changed (``from_ruleset``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

VARIANTS = ("classic", "premium", "boundless")

#: Dealer first-card values (ace = 1, ten-values = 10) against which surrender is offered (RULES 4).
SURRENDER_2_TO_9 = frozenset(range(2, 10))


@dataclass(frozen=True)
class AnalysisRules:
    """Main-game rules the exact analysis depends on (RULES 1, 3, 4, 5).

    decks: 52-card decks in the shoe (RULES 1: 8).
    peek: dealer has a hole card and ends the round at once on a blackjack (premium, boundless,
        RULES 3). When False the dealer's second card is drawn after the players (classic).
    late_bj_loses_all: only when ``peek`` is False: a dealer blackjack found after the players
        acted takes every stake (doubles and second split hand included). RULES 5 [decision] for
        classic is False: only the original stake is lost, which makes the game equal to peek.
    surrender_upcards: dealer first-card values (ace = 1) against which late surrender is allowed
        (RULES 4: 2-9); empty = no surrender. Only 2-9 are supported.
    das: double after split allowed (RULES 4: yes in every variant).
    split: one split of two equal-value cards allowed (RULES 4: yes, no resplit).
    hit_split_aces: split aces may be hit (RULES 4: no, one card each).
    dealer_hits_soft_17: H17 instead of S17 (RULES 3: S17).
    blackjack_pays: odds of a player blackjack (RULES 5: 3:2).
    """

    decks: int = 8
    peek: bool = True
    late_bj_loses_all: bool = False
    surrender_upcards: frozenset = field(default=SURRENDER_2_TO_9)
    das: bool = True
    split: bool = True
    hit_split_aces: bool = False
    dealer_hits_soft_17: bool = False
    blackjack_pays: Fraction = Fraction(3, 2)

    def __post_init__(self):
        if self.decks < 1:
            raise ValueError("decks must be >= 1")
        sur = frozenset(int(v) for v in self.surrender_upcards)
        if not sur <= SURRENDER_2_TO_9:
            raise ValueError("surrender is only supported against dealer 2-9")
        object.__setattr__(self, "surrender_upcards", sur)
        object.__setattr__(self, "blackjack_pays", Fraction(self.blackjack_pays))

    @property
    def bj_loses_all_stakes(self) -> bool:
        """True when a dealer blackjack takes doubles and split stakes too (no-peek, all lost)."""
        return (not self.peek) and self.late_bj_loses_all


def analysis_rules_for(variant: str) -> AnalysisRules:
    """Main-game analysis settings of a variant (the variants table of docs/rules.md; RULES 3, 4, 5).

    classic: no hole card, late dealer BJ takes the original stake only, surrender vs 2-9, DAS.
    premium, boundless: hole card + peek, surrender vs 2-9, DAS. All: 8 decks, S17, BJ 3:2, one
    split, split aces one card each.
    """
    if variant == "classic":
        return AnalysisRules(peek=False, late_bj_loses_all=False)
    if variant in ("premium", "boundless"):
        return AnalysisRules(peek=True)
    raise ValueError(f"unknown variant {variant!r}")


def from_ruleset(rs) -> AnalysisRules:
    """Adapt the engine's ``RuleSet`` (tables/engine/rules.py) by reading its attributes.

    Uses ``decks``, ``peek``, ``late_bj_returns_extras``, ``surrender_against``, ``actions``,
    ``double_after_split``, ``resplit`` (must be False), ``dealer_stands_soft_17`` and the
    ``main`` pay table's ``blackjack`` odds (RULES 3, 4, 5).
    """
    if getattr(rs, "resplit", False):
        raise ValueError("resplit is not supported by the analyzer (RULES 4: no resplit)")
    actions = getattr(rs, "actions", frozenset({"split", "surrender", "double"}))
    sur = frozenset(getattr(rs, "surrender_against", SURRENDER_2_TO_9)) if "surrender" in actions else frozenset()
    bj = Fraction(3, 2)
    try:
        bj = Fraction(str(rs.pay_tables["main"]["blackjack"]))
    except (AttributeError, KeyError, TypeError):
        pass
    peek = bool(getattr(rs, "peek", True))
    return AnalysisRules(
        decks=int(getattr(rs, "decks", 8)),
        peek=peek,
        late_bj_loses_all=(not peek) and not bool(getattr(rs, "late_bj_returns_extras", True)),
        surrender_upcards=sur,
        das=bool(getattr(rs, "double_after_split", True)),
        split="split" in actions,
        hit_split_aces=False,
        dealer_hits_soft_17=not bool(getattr(rs, "dealer_stands_soft_17", True)),
        blackjack_pays=bj,
    )


def coerce(params) -> AnalysisRules:
    """``AnalysisRules`` from an ``AnalysisRules``, a variant name or an engine ``RuleSet``."""
    if isinstance(params, AnalysisRules):
        return params
    if isinstance(params, str):
        return analysis_rules_for(params)
    if hasattr(params, "peek") and hasattr(params, "variant"):
        return from_ruleset(params)
    raise TypeError(f"cannot read analysis rules from {params!r}")
