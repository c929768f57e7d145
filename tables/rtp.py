"""Theoretical RTP of the platform's tables: the exact analyzer of ``tables.engine.rtp``
asked for a table's rules, its report cached as a ``TheoreticalRtp`` row.

The cache key (``rules_key``) is a SHA-256 of the variant and its pay tables in force, so every
table with the same rules shares one row, and an edited pay table finds (or computes) another.
A row is shared by the web and worker processes, unlike an in-process cache. Computing a report
is slow the first time a process meets a variant's main-game rules (the engine memoises that per
process; the main game depends on the pay tables only through the blackjack odds) and quick for
side bets, so the admin's save queues ``tables.compute_table_rtp`` and the pay-table preview
computes inline.

RTP figures in a report are fractions of the ORIGINAL stake (0.9952 = 99.52%): main game under
the best composition-dependent strategy, insurance never taken; side bets exact.
"""
from __future__ import annotations

import hashlib
import json
from fractions import Fraction

from django.utils import timezone

from .models import Table, TheoreticalRtp


def rules_key(rules) -> str:
    """Cache key of a ``tables.engine.RuleSet``: SHA-256 hex of its variant and every pay table in
    force (odds as exact fractions, so ``"6"`` and ``"6.0"`` give the same key)."""
    tables = {bet: {pattern: str(Fraction(str(odds))) for pattern, odds in table.items()}
              for bet, table in rules.pay_tables.items()}
    text = json.dumps({"variant": rules.variant, "pay_tables": tables}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def stored_report(rules) -> dict | None:
    """The cached report of ``rules`` (a ``RuleSet``), or None when not computed yet."""
    return TheoreticalRtp.objects.filter(key=rules_key(rules)).values_list("report", flat=True).first()


def compute_report(rules) -> dict:
    """Compute the exact report of ``rules`` (a ``RuleSet``: ``tables.engine.rtp.report``) and
    store it under ``rules_key``, replacing any older row. Returns the report as stored (JSON-ready
    dict; read back, so a fresh and a cached report list their keys in the same order)."""
    from tables.engine.rtp import report

    TheoreticalRtp.objects.update_or_create(key=rules_key(rules), defaults={
        "variant": rules.variant, "report": report(rules), "computed_at": timezone.now()})
    return stored_report(rules)


def table_report(table: Table, *, compute: bool = False) -> dict | None:
    """The report of ``table``'s rules in force: the cached one, else computed now when ``compute``
    (else None). Raises ``ValueError`` when the table's pay-table overrides are invalid."""
    rules = table.rules()
    rep = stored_report(rules)
    if rep is None and compute:
        rep = compute_report(rules)
    return rep


def preview_report(variant: str, pay_tables: dict | None) -> dict:
    """The report a table of ``variant`` would have with the pay-table overrides ``pay_tables``
    (``{bet_type: {pattern: "odds"}}`` as in ``Table.pay_tables``), before they are saved: cached
    or computed (and then cached). Raises ``ValueError`` for overrides the engine refuses."""
    from tables.engine import ruleset

    rules = ruleset(variant, pay_tables or None)
    return stored_report(rules) or compute_report(rules)


def expected_rtp(rep: dict, bet_type: str) -> float | None:
    """The theoretical RTP (fraction of the original stake) of ``bet_type`` in report ``rep``:
    ``main`` and ``behind`` (a bet behind is settled on the seat's hand: the main game's figure,
    which assumes the seat plays the best strategy and the bet follows its doubles and splits)
    use the main game's, side bets their own; None for a bet type the report does not cover."""
    if bet_type in ("main", "behind"):
        return rep["main"]["rtp"]
    side = rep["side_bets"].get(bet_type)
    return side["rtp"] if side else None


def rtp_by_bet_type(rules, rep: dict) -> list[tuple[str, float]]:
    """``[(bet_type, rtp)]`` for every bet type ``rules`` (a ``RuleSet``) offers that ``rep``
    covers, main first (RTP as fractions)."""
    order = sorted(rules.bet_types, key=lambda t: (t not in ("main", "behind"), t != "main", t))
    return [(t, r) for t in order if (r := expected_rtp(rep, t)) is not None]
