"""``make bench-admin``: operator pages over 1,000,000 bets on PostgreSQL.

Times, through the Django test Client logged in as a superuser, the Bet Record's first page, a
filtered search, a player's bets, and a bet's page (median and 95th percentile of ``RUNS``
requests), with beside each the plain-SQL time of the same bet-table queries the page ran (run
raw with a cursor). Promise: every page under 300 ms at the 95th percentile, and no full COUNT
over the bet table on the list page (exits 1 otherwise)."""

import statistics
import sys
import time

from tests.bench.common import report, setup
from tests.bench.load import ensure_bets

RUNS = 30
LIMIT_MS = 300


def _p95(values):
    return sorted(values)[max(0, int(len(values) * 0.95) - 1)]


def main():
    setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    from tests.factories import otp_login

    setup_test_environment()  # the test Client's host is allowed
    loaded = ensure_bets(1_000_000)
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
    rows, failures = [], []
    for name, url in pages.items():
        for _ in range(3):
            assert client.get(url).status_code == 200, url
        with CaptureQueriesContext(connection) as captured:
            client.get(url)
        bet_sql = [q["sql"] for q in captured.captured_queries if "wagering_bet" in q["sql"]]
        if name.startswith("Bet Record") and any("COUNT(*)" in s.upper() and "LIMIT" not in s.upper() for s in bet_sql):
            failures.append(f"{name}: a full COUNT over the bet table")
        page_ms, sql_ms = [], []
        for _ in range(RUNS):
            start = time.perf_counter()
            client.get(url)
            page_ms.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            with connection.cursor() as cur:
                for sql in bet_sql:
                    cur.execute(sql)
                    cur.fetchall()
            sql_ms.append((time.perf_counter() - start) * 1000)
        rows += [(f"{name}: median", statistics.median(page_ms), "ms"), (f"{name}: p95", _p95(page_ms), "ms"),
                 (f"{name}: plain SQL median ({len(bet_sql)} bet queries)", statistics.median(sql_ms), "ms")]
        if _p95(page_ms) > LIMIT_MS:
            failures.append(f"{name}: p95 {_p95(page_ms):.0f} ms > {LIMIT_MS} ms")
    report(f"Operator pages over {loaded.bets:,} bets ({RUNS} requests each)", rows)
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
