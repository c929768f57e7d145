"""Exact RTP analyzer benchmark: ``python -m tests.bench.rtp`` (one process, one core, no I/O timed).

For each variant, times the full ``report`` (main game under the best composition-dependent
strategy + every side bet) from cold caches (dealer polynomials recompiled, no memoised dealer
probabilities or side-bet distributions), then again warm. Target: at most 5 s per variant cold.
Exits 1 if a cold report takes longer than ``--limit`` seconds (default 5).
"""
from __future__ import annotations

import argparse
import sys
import time

from tables.engine.rtp import clear_caches, report
from tables.engine.rtp import dealer as rtp_dealer
from tables.engine.rtp import maingame as rtp_maingame
from tables.engine.rtp import sidebets as rtp_sidebets
from tests.bench.common import verdict


def cold() -> None:
    """Forget every cache of the analyzer."""
    clear_caches()
    rtp_dealer.dealer_hands.cache_clear()
    rtp_dealer.hand_total.cache_clear()
    rtp_maingame._next_hands.cache_clear()
    rtp_dealer._compiled.cache_clear()
    rtp_dealer.dealer_final_distribution.cache_clear()
    rtp_sidebets._distribution.cache_clear()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.bench.rtp", description=__doc__.splitlines()[0])
    ap.add_argument("--variant", action="append", choices=("classic", "premium", "boundless"))
    ap.add_argument("--limit", type=float, default=5.0, help="seconds allowed per cold report")
    args = ap.parse_args(argv)
    ok = True
    for variant in args.variant or ("classic", "premium", "boundless"):
        cold()
        t0 = time.perf_counter()
        rep = report(variant)
        t_cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        report(variant)
        t_warm = time.perf_counter() - t0
        sides = ", ".join(f"{b} {100 * s['rtp']:.3f}%" for b, s in rep["side_bets"].items())
        print(f"{variant:9s} cold {t_cold:6.2f} s  warm {t_warm:5.2f} s  "
              f"main {100 * rep['main']['rtp']:.4f}% (published {100 * rep['published_rtp']:.2f}%)  {sides}")
        ok &= t_cold <= args.limit
    return verdict(ok)


if __name__ == "__main__":
    sys.exit(main())
