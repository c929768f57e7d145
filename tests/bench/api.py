"""``make bench-api``: the player API under 20 concurrent clients, beside its plain-SQL floor.

Data: the shared million bets of ``tests.bench.load`` (10,000 players, ~90 bets each, one with
100,000; a round's bets share their placing time). Starts gunicorn (WORKERS processes of THREADS
threads, 127.0.0.1 only: 2 cores), then for DURATION seconds per scenario drives it with CLIENTS
concurrent clients (threads in CLIENT_PROCS processes, loopback) and prints requests/s, the
50th/95th/99th-percentile latency and the CPU the clients themselves used (cores, so that a
client-bound run shows); beside each, the database time of the same queries run as plain SQL
(the ORM's statements, executed directly). Never asserts."""

import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from tests.bench.common import report, setup
from tests.bench.load import PLAYERS, ensure_bets

CLIENTS, CLIENT_PROCS, WORKERS, THREADS, DURATION = 20, 2, 2, 4, 10
PORT = int(os.environ.get("BENCH_API_PORT", "8765"))


# -- the load generator ---------------------------------------------------------------------------

def _client_proc(args):
    """One client process: ``threads`` threads requesting ``targets`` for ``seconds``; returns the
    list of latencies (seconds), the error count and the process's CPU seconds."""
    targets, threads, seconds, seed = args
    latencies, errors, lock = [], [0], threading.Lock()
    deadline = time.perf_counter() + seconds

    def run(rng):
        while time.perf_counter() < deadline:
            path, token = rng.choice(targets)
            request = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}",
                                             headers={"Authorization": f"Token {token}"})
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    response.read()
                    ok = response.status == 200
            except (urllib.error.URLError, OSError):
                ok = False
            elapsed = time.perf_counter() - start
            with lock:
                if ok:
                    latencies.append(elapsed)
                else:
                    errors[0] += 1

    cpu = time.process_time()
    pool = [threading.Thread(target=run, args=(random.Random(seed * 100 + t),)) for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return latencies, errors[0], time.process_time() - cpu


def drive(targets):
    """Drive the server with CLIENTS clients for DURATION s on ``targets`` ([(path, token)]).
    Returns ``(requests/s, p50 ms, p95 ms, p99 ms, errors, client CPU in cores)``."""
    per_proc = CLIENTS // CLIENT_PROCS
    with multiprocessing.get_context("spawn").Pool(CLIENT_PROCS) as pool:
        results = pool.map(_client_proc, [(targets, per_proc, DURATION, n) for n in range(CLIENT_PROCS)])
    latencies = sorted(x for lat, _, _ in results for x in lat)
    errors = sum(e for _, e, _ in results)
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [0] * 99
    cores = sum(cpu for _, _, cpu in results) / DURATION
    return len(latencies) / DURATION, q[49] * 1000, q[94] * 1000, q[98] * 1000, errors, cores


def start_server():
    env = {**os.environ, "ALLOWED_HOSTS": "127.0.0.1", "PLAYER_API_RATE": "100000000/min"}
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "config.wsgi", "-w", str(WORKERS),
                               "--threads", str(THREADS), "-b", f"127.0.0.1:{PORT}", "--log-level", "warning"],
                              env=env)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{PORT}/api/v1/me", timeout=1)
        except urllib.error.HTTPError:
            return server  # 401: up
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise RuntimeError("gunicorn did not start")


def sql_floor(reads, runs=30):
    """``{name: mean milliseconds}``: the SQL statements each read (``{name: callable}``) makes,
    captured once, then run ``runs`` times as plain SQL on one connection."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    floor = {}
    for name, read in reads.items():
        with CaptureQueriesContext(connection) as captured:
            read()
        with connection.cursor() as cur:
            start = time.perf_counter()
            for _ in range(runs):
                for query in captured.captured_queries:
                    cur.execute(query["sql"])
                    cur.fetchall()
            floor[name] = ((time.perf_counter() - start) / runs * 1000, len(captured.captured_queries))
    return floor


def main():
    setup()
    loaded = ensure_bets(1_000_000)
    from datetime import UTC, datetime, timedelta

    from django.db.models import Max, Min
    from rest_framework.authtoken.models import Token

    from accounts.models import Player
    from wagering import selectors
    from wagering.models import Bet

    heavy = Player.objects.get(code=loaded.heavy_code)
    sample = [f"bench-p-{n}" for n in random.Random(7).sample(range(2, PLAYERS + 1), 200)]
    tokens = {code: Token.objects.get_or_create(user=Player.objects.get(code=code).user)[0].key
              for code in sample + [heavy.code]}
    span = Bet.objects.filter(player=heavy).aggregate(a=Min("placed_at"), b=Max("placed_at"))
    day = (span["a"] + (span["b"] - span["a"]) / 2).date()
    filtered_query = f"variant=boundless&outcome=lose&date_from={day - timedelta(days=3)}&date_to={day}&tz=Europe/Berlin"
    light_bets = list(Bet.objects.filter(player__code__in=sample).values_list("pk", "player__code")[:500])
    scenarios = {
        "list, random players (~90 bets each)": [("/api/v1/bets/", tokens[code]) for code in sample],
        "list, the 100,000-bet player": [("/api/v1/bets/", tokens[heavy.code])],
        "filtered list, the 100,000-bet player": [(f"/api/v1/bets/?{filtered_query}", tokens[heavy.code])],
        "filtered list + totals=true, the 100,000-bet player":
            [(f"/api/v1/bets/?{filtered_query}&totals=true", tokens[heavy.code])],
        "bet detail, random players": [(f"/api/v1/bets/{pk}", tokens[code]) for pk, code in light_bets],
    }
    midnight = datetime.combine(day - timedelta(days=3), datetime.min.time(), tzinfo=UTC)
    heavy_list = selectors.bets_for_player(heavy)
    heavy_filtered = heavy_list.filter(table__variant="boundless", outcome="lose", placed_at__gte=midnight,
                                       placed_at__lt=midnight + timedelta(days=4))
    some_bet = heavy_list.prefetch_related("extras").first()
    page = 21  # the default page and its look-ahead row
    floors = sql_floor({
        "list page, the 100,000-bet player": lambda: list(heavy_list.values(*selectors.BET_ROW)[:page]),
        "filtered list page, the 100,000-bet player": lambda: list(heavy_filtered.values(*selectors.BET_ROW)[:page]),
        "totals of that filtered range": lambda: selectors.bet_totals(heavy_filtered),
        "bet detail (row, replay, ledger)": lambda: (heavy_list.filter(pk=some_bet.pk).first(),
                                                   selectors.bet_replay(some_bet),
                                                   list(selectors.bet_ledger_entries(some_bet))),
    })
    server = start_server()
    try:
        rows = []
        for name, targets in scenarios.items():
            rps, p50, p95, p99, errors, cores = drive(targets)
            rows += [(f"{name}: requests/s", rps, "req/s"), ("  p50 / p95 / p99", p50, f"/ {p95:.1f} / {p99:.1f} ms"),
                     ("  errors", errors, ""), ("  client CPU", cores, "cores")]
    finally:
        server.terminate()
        server.wait(10)
    rows += [(f"plain SQL, {name}", ms, f"ms ({n} statements)") for name, (ms, n) in floors.items()]
    report(f"player API, {CLIENTS} clients, gunicorn {WORKERS} workers x {THREADS} threads, {DURATION} s per "
           f"scenario ({loaded.bets:,} bets, {PLAYERS:,} players)", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
