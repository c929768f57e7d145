"""``make bench-admin``: operator pages over 1,000,000 bets on PostgreSQL.

Times, through the Django test Client logged in as a superuser, the Bet Record's first page, a
filtered search, a player's bets, and a bet's page; the dashboard (the admin's index) as the
provider's staff and as an operator's staff, the reports by day and by table over 30 days, a
report's CSV and the observed RTP page (median and 95th percentile of ``RUNS`` requests), with
beside each its floor: the plain-SQL time of the same queries the page ran (run raw with a
cursor): for the Bet Record pages the bet-table queries, for the dashboard and reports every
query. Promise: the Bet Record pages, the dashboard and the observed RTP under 300 ms at the 95th
percentile, and no full COUNT over the bet table on the list page (exits 1 otherwise). The
reports by day, table and CSV are printed beside their floor without a promise: over a range
they count its distinct players from ``DailyPlayer`` (a row per player, day and table: every
day's players, over every day of the range), and their floor shows what that SQL alone costs.
The set-up loads the bets and their rollups once (``tests.bench.load``) and runs the RTP watch
once (the dashboard shows its figures)."""

import re
import statistics
import sys
import time

from tests.bench.common import report, setup
from tests.bench.load import ensure_bets

RUNS = 30
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
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment

    from accounts.models import OperatorStaff
    from accounts.services import default_operator
    from settlement import rtp_watch
    from settlement.models import RtpWatchFigure

    setup_test_environment()  # the test Client's host is allowed
    loaded = ensure_bets(1_000_000)
    if not RtpWatchFigure.objects.filter(table=loaded.table).exists():
        rtp_watch.watch()
    users = get_user_model().objects
    user, _ = users.get_or_create(username="bench-admin", defaults={"is_staff": True, "is_superuser": True})
    staff, _ = users.get_or_create(username="bench-operator-staff", defaults={"is_staff": True,
                                                                               "is_superuser": True})
    OperatorStaff.objects.get_or_create(user=staff, defaults={"operator": default_operator()})
    client, operator_client = Client(), Client()
    client.force_login(user)
    operator_client.force_login(staff)
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
    rows, failures = [], []
    for name, (client, url, floor, promised) in pages.items():
        for _ in range(3):
            assert client.get(url).status_code == 200, url
        with CaptureQueriesContext(connection) as captured:
            client.get(url)
        bet_sql = _reads(captured.captured_queries, floor)
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
        what = "bet queries" if floor == "bet" else "queries"
        rows += [(f"{name}: median", statistics.median(page_ms), "ms"), (f"{name}: p95", _p95(page_ms), "ms"),
                 (f"{name}: floor, plain SQL p95 ({len(bet_sql)} {what})", _p95(sql_ms), "ms"),
                 (f"{name}: floor, plain SQL median", statistics.median(sql_ms), "ms")]
        if promised and _p95(page_ms) > LIMIT_MS:
            failures.append(f"{name}: p95 {_p95(page_ms):.0f} ms > {LIMIT_MS} ms")
    report(f"Operator pages over {loaded.bets:,} bets ({RUNS} requests each)", rows)
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
