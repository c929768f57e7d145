"""``make bench-admin``: operator pages over the shared bets of ``tests.bench.load`` on PostgreSQL
(``BENCH_BETS`` of them, default 1,000,000).

Times, through the Django test Client logged in as a superuser, the Bet Record's first page, a
filtered search, a player's bets, and a bet's page; the dashboard (the admin's index) as the
provider's staff and as an operator's staff, the reports by day and by table over 30 days, a
report's CSV and the observed RTP page (median and 95th percentile of ``RUNS`` requests, and the
CPU one request costs this process and its PostgreSQL backend), with beside each its floor: the
plain-SQL time of the same queries the page ran (run raw with a cursor): for the Bet Record pages
the bet-table queries, for the dashboard and reports every query. The reports by day, table and
CSV carry no time promise: over a range they count its distinct players from ``DailyPlayer``, and
their floor shows what that SQL alone costs. The set-up runs the RTP watch once (the dashboard
shows its figures); the loader keeps the rollups of its bets (``tests.bench.load``). Past
1,000,000 bets, each CPU figure is printed beside its figure at 1,000,000 (measured first in the
same run when the data set grows from there, else the one kept by an earlier run:
``tests.bench.load.scale_rows``). Promise: every other page under 300 ms at the 95th percentile, the Bet
Record's CPU per request within 1.2 times its figure at 1,000,000 bets, and no full COUNT over the
bet table on the list page (exits 1 otherwise)."""

import os
import re
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


#: A server-side cursor's statement (``QuerySet.iterator()`` on PostgreSQL) ahead of its SELECT.
_DECLARE = re.compile(r"^DECLARE .+? CURSOR (?:WITH(?:OUT)? HOLD )?FOR ", re.S)


def _reads(queries, floor):
    """The SELECTs among a page's captured ``queries`` to run raw as its floor (a server-side
    cursor's as its SELECT): every one for ``floor`` "all", those reading the bet table for "bet"."""
    selects = [_DECLARE.sub("", q["sql"]) for q in queries]
    return [s for s in selects if s.lstrip().upper().startswith(("SELECT", "WITH"))
            and (floor == "all" or "wagering_bet" in s)]


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

    from accounts.models import OperatorStaff
    from accounts.services import default_operator
    from settlement import rtp_watch
    from settlement.models import RtpWatchFigure
    from tests.factories import otp_login

    if not RtpWatchFigure.objects.filter(table=loaded.table).exists():
        rtp_watch.watch()
    users = get_user_model().objects
    user, _ = users.get_or_create(username="bench-admin", defaults={"is_staff": True, "is_superuser": True})
    staff, _ = users.get_or_create(username="bench-operator-staff", defaults={"is_staff": True,
                                                                               "is_superuser": True})
    OperatorStaff.objects.get_or_create(user=staff, defaults={"operator": default_operator()})
    client, operator_client = Client(), Client()
    otp_login(client, user)
    otp_login(operator_client, staff)
    day = time.strftime("%Y-%m-%d")
    # (client, url, floor: "bet" = the page's bet-table queries, "all" = every query it ran, promised < 300 ms)
    pages = {
        "Bet Record, first page": (client, "/admin/wagering/bet/", "bet", True),
        "filtered search (table, outcome, stake, today)":
            (client, f"/admin/wagering/bet/?table={loaded.table.code}&outcome=lose&stake_min=5&placed_from={day}",
             "bet", True),
        "a player's bets": (client, f"/admin/wagering/bet/?player={loaded.player_code}", "bet", True),
        "a bet's page (with replay)":
            (client, f"/admin/wagering/bet/{loaded.sample_bet_ids[len(loaded.sample_bet_ids) // 2]}/change/", "bet",
             True),
        "dashboard, the provider's staff": (client, "/admin/", "all", True),
        "dashboard, an operator's staff": (operator_client, "/admin/", "all", True),
        "observed RTP, last 30 days": (client, "/admin/wagering/dailyrollup/rtp/", "all", True),
        "report by day, last 30 days": (client, "/admin/wagering/dailyrollup/", "all", False),
        "report by table, last 30 days, an operator's staff":
            (operator_client, "/admin/wagering/dailyrollup/?group=table", "all", False),
        "report CSV by day, last 30 days": (client, "/admin/wagering/dailyrollup/?format=csv", "all", False),
    }
    backend = backend_pid()
    rows, failures, timing, figures = [], [], [], {}
    for name, (client, url, floor, promised) in pages.items():
        for _ in range(3):
            status = client.get(url).status_code
            if status != 200:
                failures.append(f"{name}: {url} answered {status}")
        with CaptureQueriesContext(connection) as captured:
            client.get(url)
        bet_sql = _reads(captured.captured_queries, floor)
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
                 (f"{name}: floor, plain SQL median ({len(bet_sql)} {'bet queries' if floor == 'bet' else 'queries'})",
                  statistics.median(sql_ms), "ms")]
        if promised and _p95(page_ms) > LIMIT_MS:
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
