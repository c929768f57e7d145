"""Pure blackjack rules engine (docs/rules.md, RULES 1-10).

No Django, no I/O (except the CLI in ``__main__``). This package is the ONE place where a
blackjack rule is written; everything else in the back office asks it.

Public API (import from ``tables.engine``):

- cards:   ``parse_card``, ``card_value``, ``card_rank``, ``card_suit``, ``card_colour``,
           ``rank_order``, ``RANKS``, ``SUITS``
- hand:    ``score``, ``hand_value``, ``is_soft``, ``is_blackjack``, ``is_bust``
- shoe:    ``Shoe``
- rules:   ``RuleSet``, ``ruleset``, ``VARIANTS``, ``DEFAULT_PAY_TABLES``, ``RULES_VERSION``
- record:  ``InvalidRecord``, ``parse_record``
- legal:   ``legal_actions``, ``why_illegal``, ``fallback``, ``auto_action``, ``auto_play``
- settling: ``settle``, ``settle_naive``; results: ``RoundResult``, ``BetResult``, ``HandResult``
- play:    ``RoundPlay``, ``deal_round``
- strategy: ``basic_strategy``

And, imported from their modules: ``extras`` (the extra stakes a bet takes, RULES 4, 6),
``seating`` (seats, bets behind, mirrored stakes, unseating, RULES 6, 9), ``payouts``,
``sidebets``, ``rtp`` (the exact RTP analyzer).
"""
from .cards import RANKS, SUITS, card_colour, card_rank, card_suit, card_value, parse_card, rank_order
from .hand import hand_value, is_blackjack, is_bust, is_soft, score
from .legal import auto_action, auto_play, fallback, legal_actions, why_illegal
from .money import round_down
from .record import InvalidRecord, parse_record
from .results import BetResult, HandResult, RoundResult
from .rules import DEFAULT_PAY_TABLES, RULES_VERSION, VARIANTS, RuleSet, ruleset
from .settling import settle, settle_naive
from .shoe import Shoe

__all__ = [
    "RANKS", "SUITS", "card_colour", "card_rank", "card_suit", "card_value", "parse_card",
    "rank_order", "hand_value", "is_blackjack", "is_bust", "is_soft", "score", "auto_action",
    "auto_play", "fallback", "legal_actions", "why_illegal", "round_down", "InvalidRecord",
    "parse_record", "BetResult", "HandResult", "RoundResult", "settle", "settle_naive",
    "DEFAULT_PAY_TABLES", "RULES_VERSION", "VARIANTS", "RuleSet", "ruleset", "Shoe",
]
