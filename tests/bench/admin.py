"""``make bench-admin``: operator pages over the shared bets of ``tests.bench.load`` on PostgreSQL
(``BENCH_BETS`` of them, default 1,000,000).

Times, through the Django test Client logged in as a superuser, the Bet Record's first page, a
filtered search, a player's bets, and a bet's page (median and 95th percentile of ``RUNS``
requests, and the CPU one request costs this process and its PostgreSQL backend), with beside each
the plain-SQL time of the same bet-table queries the page ran (run raw with a cursor). Past
1,000,000 bets, each CPU figure is printed beside its figure at 1,000,000 (measured first in the
same run when the data set grows from there, else the one kept by an earlier run:
``tests.bench.load.scale_rows``). Promise: every page under 300 ms at the 95th percentile, the Bet
Record's CPU per request within 1.2 times its figure at 1,000,000 bets, and no full COUNT over the
bet table on the list page (exits 1 otherwise)."""

import os
import statistics
import sys
import time

from tests.bench.common import SMOKE, backend_pid, cpu_seconds, report, setup, sized, verdict
from tests.bench.load import ensure_bets, scale_rows, sizes

BETS = int(os.environ.get("BENCH_BETS", sized(1_000_000, 2_000)))
RUNS = sized(30, 3)
LIMIT_MS = 300


def _p95(values):
    return sorted(values)[max(0, int(len(values) * 0.95) - 1)]


def main():
    setup()
    from django.test.utils import setup_test_environment

    setup_test_environment()  # the test Client's host is allowed
    status = 0
    for n in sizes(BETS):
        status |= measure(ensure_bets(n))
    return status


def measure(loaded):
    """Time the pages over ``loaded`` and print the figures; returns the exit status."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from tests.factories import otp_login

    user, _ = get_user_model().objects.get_or_create(username="bench-admin", defaults={"is_staff": True,
                                                                                       "is_superuser": True})
    client = Client()
    otp_login(client, user)
    day = time.strftime("%Y-%m-%d")
    pages = {
        "Bet Record, first page": "/admin/wagering/bet/",
        "filtered search (table, outcome, stake, today)":
            f"/admin/wagering/bet/?table={loaded.table.code}&outcome=lose&stake_min=5&placed_from={day}",
        "a player's bets": f"/admin/wagering/bet/?player={loaded.player_code}",
        "a bet's page (with replay)":
            f"/admin/wagering/bet/{loaded.sample_bet_ids[len(loaded.sample_bet_ids) // 2]}/change/",
    }
    backend = backend_pid()
    rows, failures, timing, figures = [], [], [], {}
    for name, url in pages.items():
        for _ in range(3):
            status = client.get(url).status_code
            if status != 200:
                failures.append(f"{name}: {url} answered {status}")
        with CaptureQueriesContext(connection) as captured:
            client.get(url)
        bet_sql = [q["sql"] for q in captured.captured_queries if "wagering_bet" in q["sql"]]
        if name.startswith("Bet Record") and any("COUNT(*)" in s.upper() and "LIMIT" not in s.upper() for s in bet_sql):
            failures.append(f"{name}: a full COUNT over the bet table")
        page_ms, sql_ms = [], []
        cpu, database = time.process_time(), cpu_seconds(backend)
        for _ in range(RUNS):
            start = time.perf_counter()
            client.get(url)
            page_ms.append((time.perf_counter() - start) * 1000)
        cpu, database = time.process_time() - cpu, (cpu_seconds(backend) or 0) - (database or 0)
        for _ in range(RUNS):
            start = time.perf_counter()
            with connection.cursor() as cur:
                for sql in bet_sql:
                    cur.execute(sql)
                    cur.fetchall()
            sql_ms.append((time.perf_counter() - start) * 1000)
        figures.update({f"{name}: Django CPU ms": cpu / RUNS * 1000,
                        f"{name}: PostgreSQL CPU ms": database / RUNS * 1000})
        rows += [(f"{name}: median", statistics.median(page_ms), "ms"), (f"{name}: p95", _p95(page_ms), "ms"),
                 (f"{name}: CPU per request, Django / PostgreSQL", cpu / RUNS * 1000,
                  f"/ {database / RUNS * 1000:.2f} ms"),
                 (f"{name}: plain SQL median ({len(bet_sql)} bet queries)", statistics.median(sql_ms), "ms")]
        if _p95(page_ms) > LIMIT_MS:
            timing.append(f"{name}: p95 {_p95(page_ms):.0f} ms > {LIMIT_MS} ms")
    report(f"Operator pages over {loaded.bets:,} bets ({RUNS} requests each), load average "
           f"{os.getloadavg()[0]:.1f}", rows)
    record = {name for name in figures if not name.startswith("a bet's page") and "Django" in name}
    title, grown, ok = scale_rows("admin", loaded, figures, record)
    if grown:
        report(f"operator pages' {title}", grown)
    for failure in failures + ([] if SMOKE else timing):
        print("FAIL:", failure)
    return 1 if failures else verdict(ok and not timing)


if __name__ == "__main__":
    sys.exit(main())
