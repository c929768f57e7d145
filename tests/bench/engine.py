"""Rules-engine benchmark: ``python -m tests.bench.engine`` (one core, no I/O in the timed parts).

(a) seated-table rounds settled per second (7 seats, bets behind, side bets; classic + premium)
(b) boundless player-bets settled per second: one round, 20,000 players following basic strategy
    with 5% random deviations and 3% timeouts (grouped replay: one replay per distinct path)
(c) the same round settled naively (one replay per player) and the ratio (b)/(c).
Exits 1 if the ratio is below 10.
"""
from __future__ import annotations

import argparse
import gc
import random
import sys
import time

from tables.engine.play import STAKES, RoundPlay, random_decider
from tables.engine.rules import ruleset
from tables.engine.settling import settle, settle_naive
from tables.engine.shoe import Shoe
from tests.bench.common import sized, verdict


def seated_records(variant: str, n: int, rng: random.Random) -> list:
    rules = ruleset(variant)
    shoe = Shoe(rng=rng)
    side = "pair" if variant == "classic" else "pairs"
    out = []
    for _ in range(n):
        bets = []
        for seat in range(1, 8):
            bets.append({"id": f"m{seat}", "player": f"p{seat}", "type": "main", "seat": seat,
                         "stake": rng.choice(STAKES), "insurance": rng.random() < 0.2})
            bets.append({"id": f"s{seat}", "player": f"q{seat}", "type": side, "seat": seat,
                         "stake": "1.00"})
            for k in range(2):
                bets.append({"id": f"b{seat}-{k}", "player": f"x{seat}-{k}", "type": "behind",
                             "seat": seat, "stake": rng.choice(STAKES),
                             "follow_double": rng.random() < 0.5, "follow_split": rng.random() < 0.5,
                             "insurance": rng.random() < 0.2})
        out.append(RoundPlay(rules, shoe, bets, decide=random_decider(rng, 0.05, 0.03),
                             shoe_round=shoe.begin_round()).play())
        shoe.end_round()
    return out


def boundless_record(players: int, rng: random.Random) -> dict:
    rules = ruleset("boundless")
    shoe = Shoe(rng=rng)
    bets = [{"id": f"m{p}", "player": f"p{p}", "type": "main", "stake": rng.choice(STAKES),
             "insurance": rng.random() < 0.1} for p in range(players)]
    return RoundPlay(rules, shoe, bets, decide=random_decider(rng, 0.05, 0.03),
                     shoe_round=shoe.begin_round()).play()


def best_of(fns, rounds: int, gc_off: bool = False) -> list:
    """Best wall time of each function in ``fns`` over ``rounds`` rounds; each round runs every
    function once, in turn, so that all of them see the same machine (the ratio of two best times
    taken minutes apart on a busy machine says more about the machine than about the code).
    By default the garbage collector stays ON, as in the settlement worker (the naive replay
    allocates far more objects, and pays for it in GC); ``gc_off`` times as ``timeit`` does."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            gc.collect()
            if gc_off:
                gc.disable()
            try:
                t = time.perf_counter()
                fn()
                best[i] = min(best[i], time.perf_counter() - t)
            finally:
                gc.enable()
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.bench.engine")
    ap.add_argument("--rounds", type=int, default=sized(2000, 20))
    ap.add_argument("--players", type=int, default=sized(20000, 500))
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=sized(15, 1))
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)

    recs = seated_records("classic", args.rounds // 2, rng) + seated_records("premium", args.rounds // 2, rng)
    nbets = sum(len(r["bets"]) for r in recs)
    t, = best_of([lambda: [settle(r) for r in recs]], max(1, args.repeat // 5))
    print(f"(a) seated rounds (7 seats, 2 behind + 1 side bet per seat, {nbets / len(recs):.0f} bets/round): "
          f"{len(recs) / t:,.0f} rounds/s ({nbets / t:,.0f} bets/s)")

    # pick a round where players actually diverge (not a dealer-blackjack round)
    while True:
        rec = boundless_record(args.players, rng)
        if len(rec["dealer"]) > 2 or rec["dealer"][0][0] not in "AKQJT":
            break
    res = settle(rec)
    paths = len(res.paths)
    naive = settle_naive(rec)
    assert all(naive.bets[k].returned == b.returned and naive.bets[k].staked == b.staked
               for k, b in res.bets.items()), "grouped and naive settlements differ"
    tg, tn = best_of([lambda: settle(rec), lambda: settle_naive(rec)], args.repeat)
    n = args.players
    print(f"(b) boundless, {n:,} players, {paths} distinct paths: {n / tg:,.0f} player-bets/s "
          f"({tg * 1000:.1f} ms per round)")
    print(f"(c) boundless naive (one replay per player): {n / tn:,.0f} player-bets/s "
          f"({tn * 1000:.1f} ms); ratio {tn / tg:.1f}x")
    tg0, tn0 = best_of([lambda: settle(rec), lambda: settle_naive(rec)], args.repeat, gc_off=True)
    print(f"    (GC disabled while timing: grouped {n / tg0:,.0f}/s, naive {n / tn0:,.0f}/s, "
          f"ratio {tn0 / tg0:.1f}x)")
    ok = tn / tg >= 10
    if not ok:
        print("ratio below 10x", file=sys.stderr)
    return verdict(ok)


if __name__ == "__main__":
    sys.exit(main())
