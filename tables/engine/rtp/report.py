"""Full RTP report of a variant: main game and every side bet (RULES 5 and 8)."""
from __future__ import annotations

import dataclasses
from fractions import Fraction

from ..rules import ruleset as engine_ruleset
from .dealer import dealer_outcome_distribution
from .maingame import main_game_ev
from .params import AnalysisRules, coerce
from .sidebets import SIDE_BET_TYPES, normalise_pay_table, side_bet_distribution, side_bet_rtp


def report(ruleset_or_params="classic", pay_tables: dict | None = None) -> dict:
    """RTP of the main game and of each side bet, with the probability of every outcome
    (RULES 5, 8). JSON-ready (floats).

    ``ruleset_or_params``: a variant name, the engine's ``RuleSet`` (its pay tables are used) or
    an ``AnalysisRules`` (then only the bets in ``pay_tables`` are reported). ``pay_tables``:
    ``{bet_type: {pattern: odds}}``, overriding the variant's tables bet by bet.

    Returns ``{"variant", "rules", "published_rtp", "main": {...}, "side_bets": {bet: {...}}}``
    where ``main`` has ``rtp``, ``house_edge``, ``ev_by_upcard``, ``first_action_frequency`` and
    the dealer's ``dealer_outcomes``; each side bet has ``rtp``, ``house_edge``, ``pay_table``
    and ``outcomes`` (pattern -> probability, ``"lose"`` included).
    """
    rs = None
    variant = None
    if isinstance(ruleset_or_params, str):
        rs = engine_ruleset(ruleset_or_params)
    elif not isinstance(ruleset_or_params, AnalysisRules):
        rs = ruleset_or_params
    if rs is not None:
        variant = rs.variant
    rules = coerce(rs if rs is not None else ruleset_or_params)
    tables = {}
    if rs is not None:
        tables = {k: dict(v) for k, v in rs.pay_tables.items() if k in SIDE_BET_TYPES}
    for k, v in (pay_tables or {}).items():
        if k in SIDE_BET_TYPES:
            tables[k] = {**tables.get(k, {}), **v}
    main = main_game_ev(rules)
    dealer = dealer_outcome_distribution(rules.decks, rules.dealer_hits_soft_17)
    out = {
        "variant": variant,
        "rules": {k: (sorted(v) if isinstance(v, frozenset) else (float(v) if isinstance(v, Fraction) else v))
                  for k, v in dataclasses.asdict(rules).items()},
        "published_rtp": float(rs.max_rtp) / 100 if rs is not None and getattr(rs, "max_rtp", None) else None,
        "main": {
            "rtp": main.rtp,
            "house_edge": -main.ev,
            "ev_by_upcard": main.by_upcard,
            "first_action_frequency": main.action_frequency,
            "dealer_outcomes": {k: float(v) for k, v in dealer.items()},
        },
        "side_bets": {},
    }
    for bet in SIDE_BET_TYPES:
        if bet not in tables:
            continue
        table = normalise_pay_table(tables[bet])
        dist = side_bet_distribution(bet, variant or "boundless", table, rules.decks)
        rtp = side_bet_rtp(dist, table)
        out["side_bets"][bet] = {
            "rtp": float(rtp),
            "house_edge": float(1 - rtp),
            "pay_table": {k: float(v) for k, v in table.items()},
            "outcomes": {k: float(v) for k, v in dist.items()},
        }
    return out
