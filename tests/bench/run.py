"""``make bench-run``: the table simulator end to end on PostgreSQL with 2 real worker processes.

Deals SEATED_ROUNDS classic/premium rounds (split over the two EUR tables) and BOUNDLESS_ROUNDS
boundless rounds of BOUNDLESS_PLAYERS players each, through the services (``delivery.simulator``),
while 2 Celery workers settle; then prints rounds/s (dealing), bets settled/s (first record to
last settlement) and the latency from a round's record to its settlement (``resulted_at`` →
``settled_at``: median, 95th percentile) with its three parts (validating the record, waiting for
a worker, settling): their means, and those of the round at the 95th percentile with its number of
payouts. Expectation: a boundless round of 5,000 players is settled within 2 s of its record at
the 95th percentile.

Sizes: environment ``BENCH_SEATED_ROUNDS`` (10000), ``BENCH_BOUNDLESS_ROUNDS`` (200),
``BENCH_BOUNDLESS_PLAYERS`` (5000), ``BENCH_WORKERS`` (2), or the same as arguments:
``python -m tests.bench.run --seated-rounds 1000 --boundless-rounds 20``."""

import argparse
import os
import statistics
import sys
import tempfile

from tests.bench.common import report, setup, sized


def _args():
    env = os.environ.get
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seated-rounds", type=int, default=int(env("BENCH_SEATED_ROUNDS", sized(10_000, 20))))
    parser.add_argument("--boundless-rounds", type=int, default=int(env("BENCH_BOUNDLESS_ROUNDS", sized(200, 2))))
    parser.add_argument("--boundless-players", type=int,
                        default=int(env("BENCH_BOUNDLESS_PLAYERS", sized(5_000, 50))))
    parser.add_argument("--workers", type=int, default=int(env("BENCH_WORKERS", 2)))
    return parser.parse_args()


def _phases(rounds):
    """``{round pk: (validating, waiting, settling)}``: the seconds of the three parts of record ->
    settled of each of ``rounds`` (a Round queryset): validating and storing the record
    (``record_result``: round stamped RESULTED -> its RESULTED event), waiting for a worker (-> the
    first bet stamped settled: the settle task began writing), settling (-> the round stamped
    SETTLED). Rounds without a settled bet are left out."""
    from django.db.models import Min, OuterRef, Subquery

    from tables.models import RoundEvent

    resulted_event = (RoundEvent.objects.filter(round=OuterRef("pk"), kind=RoundEvent.Kind.RESULTED)
                      .order_by("-created_at").values("created_at")[:1])
    rows = rounds.annotate(validated=Subquery(resulted_event), settle_began=Min("bets__settled_at")).values_list(
        "pk", "resulted_at", "validated", "settle_began", "settled_at")
    return {pk: tuple((b - a).total_seconds() for a, b in zip(times, times[1:]))
            for pk, *times in rows if None not in times}


def _measure(label, result):
    """Rows for one simulation: dealing rate, settling rate, record-to-settlement latency, its parts
    (mean), and the parts and payouts of the round at the 95th percentile."""
    from django.db.models import Count, Max, Min, Q

    from tables.models import Round
    from wagering.models import Bet

    rounds = Round.objects.filter(pk__in=result.stats.rounds, state=Round.State.SETTLED)
    latencies = sorted(((s - r).total_seconds(), pk)
                       for pk, r, s in rounds.values_list("pk", "resulted_at", "settled_at"))
    span = rounds.aggregate(first=Min("resulted_at"), last=Max("settled_at"))
    settled = Bet.objects.filter(round__in=result.stats.rounds, state=Bet.State.SETTLED).count()
    nan = float("nan")
    seconds = (span["last"] - span["first"]).total_seconds() if latencies else nan
    p95, at_p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))] if latencies else (nan, None)
    phases = _phases(rounds)
    means = [sum(column) / len(phases) for column in zip(*phases.values())] if phases else [nan] * 3
    parts = phases.get(at_p95, (nan,) * 3)
    paid = rounds.filter(pk=at_p95).aggregate(n=Count("bets", filter=Q(bets__returned__gt=0)))["n"] or 0
    return [(f"{label}: rounds dealt", len(result.stats.rounds), "rounds"),
            (f"{label}: dealing", len(result.stats.rounds) / result.seconds, "rounds/s"),
            (f"{label}: bets settled", settled, "bets"),
            (f"{label}: settling (first record to last settlement)", settled / seconds, "bets settled/s"),
            (f"{label}: record -> settled, median", statistics.median(t for t, _ in latencies) if latencies else nan,
             "s"),
            (f"{label}: record -> settled, 95th percentile", p95, "s"),
            (f"{label}:   of which validating and storing the record (mean)", means[0], "s"),
            (f"{label}:   waiting for a worker (mean)", means[1], "s"),
            (f"{label}:   settling (mean)", means[2], "s"),
            (f"{label}: the round at the 95th percentile: bets paid", paid, "bets"),
            (f"{label}:   validating and storing its record", parts[0], "s"),
            (f"{label}:   waiting for a worker", parts[1], "s"),
            (f"{label}:   settling it", parts[2], "s")], p95


def main():
    args = _args()
    setup()
    from delivery.simulator.config import SimConfig
    from delivery.simulator.runner import run_simulation
    from tests.workers import Worker, purge_queues

    purge_queues()
    log_dir = tempfile.mkdtemp(prefix="bench-run-")
    workers = [Worker(f"bench{i}", log_dir=log_dir) for i in range(1, args.workers + 1)]
    try:
        seated = run_simulation(SimConfig(rounds=args.seated_rounds // 2, variants=("classic", "premium"),
                                          currencies=("EUR",), fault_rate=0, seed=1), progress=True)
        boundless = run_simulation(SimConfig(rounds=args.boundless_rounds, variants=("boundless",), currencies=("EUR",),
                                             boundless_players=args.boundless_players, fault_rate=0, seed=2),
                                   progress=True)
    finally:
        for worker in workers:
            worker.stop()
    rows, _ = _measure("seated", seated)
    more, p95 = _measure(f"boundless x {args.boundless_players:,} players", boundless)
    report(f"table simulator on PostgreSQL, {args.workers} workers (logs: {log_dir})",
           rows + more + [("boundless 95th percentile within 2 s", float(p95 <= 2), "(1 = yes)")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
