"""Exact RTP analyzer (RULES 1-5, 8): pure Python, no Django, no I/O.

- ``AnalysisRules``, ``analysis_rules_for(variant)``, ``from_ruleset(RuleSet)``
- ``main_game_ev(params) -> MainGameResult`` (params: AnalysisRules, variant name or RuleSet)
- ``side_bet_distribution(bet_type, variant, pay_table=None) -> {pattern: Fraction}``
- ``side_bet_rtp(distribution, pay_table) -> Fraction``
- ``report(ruleset_or_params, pay_tables=None) -> dict``
- dealer helpers: ``dealer_probs``, ``dealer_probs_exact``, ``bust_card_count_distribution``,
  ``dealer_bust_probability``
"""
from .dealer import (
                     bust_card_count_distribution,
                     dealer_bust_probability,
                     dealer_outcome_distribution,
                     dealer_probs,
                     dealer_probs_exact,
                     full_shoe,
)
from .maingame import MainGameResult, clear_caches, main_game_ev
from .params import AnalysisRules, analysis_rules_for, from_ruleset
from .report import report
from .sidebets import card_distribution, side_bet_distribution, side_bet_rtp

__all__ = [
    "AnalysisRules", "analysis_rules_for", "from_ruleset", "main_game_ev", "MainGameResult",
    "clear_caches", "side_bet_distribution", "side_bet_rtp", "card_distribution", "report",
    "dealer_outcome_distribution", "dealer_probs", "dealer_probs_exact",
    "bust_card_count_distribution", "dealer_bust_probability", "full_shoe",
]
