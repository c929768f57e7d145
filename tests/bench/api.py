"""``make bench-api``: the player API under 20 concurrent clients, beside its plain-SQL floor.

Loads (once; kept and reused, marked by the table ``bench-api``) 1,000,000 settled boundless bets
across 10,000 players, one of whom holds 100,000, in 200,000 rounds of 5 bets (the 5 bets of a
round share their placing time: ties everywhere), with bulk ``INSERT ... SELECT generate_series``.
Starts gunicorn (WORKERS sync workers, 127.0.0.1 only), then for DURATION seconds per scenario
drives it with CLIENTS concurrent clients (threads in CLIENT_PROCS processes, loopback) and
prints requests/s and the 50th/95th/99th-percentile latency; beside each, the database time of
the same queries run as plain SQL (the ORM's statements, executed directly). Never asserts."""

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

TABLE = "bench-api"
PLAYERS, BETS, HEAVY_BETS, PER_ROUND = 10_000, 1_000_000, 100_000, 5
CLIENTS, CLIENT_PROCS, WORKERS, DURATION = 20, 4, 4, 10
PORT = int(os.environ.get("BENCH_API_PORT", "8765"))


def load():
    """Create the bench data unless the table ``bench-api`` exists. Returns nothing."""
    from django.db import connection, transaction

    from tables.models import Table
    if Table.objects.filter(code=TABLE).exists():
        return
    player = "CASE WHEN {i} < %(heavy)s THEN 0 ELSE 1 + ({i} %% (%(players)s - 1)) END"
    params = {"heavy": HEAVY_BETS, "players": PLAYERS, "bets": BETS, "per": PER_ROUND}
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute("INSERT INTO accounts_currency (code, name, minor_units, play_for_fun) "
                    "VALUES ('EUR', 'EUR', 2, false) ON CONFLICT DO NOTHING")
        cur.execute("INSERT INTO tables_table (code, name, variant, currency_id, status, pay_tables, penetration, "
                    "suspend_limit_seconds, created_at) VALUES (%s, 'Bench API', 'boundless', 'EUR', 'open', "
                    "'{}', 75, 600, now()) RETURNING id", [TABLE])
        table_id = cur.fetchone()[0]
        cur.execute("INSERT INTO tables_shoe (table_id, sequence, shuffled_at, burn_count, rounds_dealt, cut_card_out) "
                    "VALUES (%s, 1, now(), 0, 1, false) RETURNING id", [table_id])
        shoe_id = cur.fetchone()[0]
        cur.execute("""INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email,
                       is_staff, is_active, date_joined)
                       SELECT '!', false, 'ba-' || n, '', '', '', false, true, now()
                       FROM generate_series(0, %(players)s - 1) n""", params)
        cur.execute("""INSERT INTO accounts_player (user_id, code, account_kind, created_at)
                       SELECT id, username, 'real', now() FROM auth_user WHERE username LIKE 'ba-%%'""")
        cur.execute("""INSERT INTO authtoken_token (key, user_id, created)
                       SELECT md5('bench-api-' || username), id, now() FROM auth_user WHERE username LIKE 'ba-%%'""")
        cur.execute("""INSERT INTO accounts_account (kind, currency_id, player_id, name, balance, negative_flagged,
                       created_at) SELECT 'wallet', 'EUR', id, '', 1000, false, now() FROM accounts_player
                       WHERE code LIKE 'ba-%%'""")
        # Rounds: player 20 (T Q) stands, dealer 17 (9 8): every main bet wins 1:1.
        cur.execute(f"""INSERT INTO tables_round (table_id, shoe_id, shoe_round, external_id, state, record,
                        failure_reason, opened_at, resulted_at, settled_at)
                        SELECT %(table)s, %(shoe)s, 1, 'BA-' || r, 'settled',
                               jsonb_build_object('format', 'round-record/1', 'variant', 'boundless',
                                 'round', 'BA-' || r, 'shoe_round', 1, 'currency', 'EUR',
                                 'dealer', '["9S", "8D"]'::jsonb, 'player_cards', '["TH", "QH"]'::jsonb,
                                 'bets', (SELECT jsonb_agg(jsonb_build_object('id', 'b' || k,
                                            'player', 'ba-' || ({player.format(i="(r * %(per)s + k)")}),
                                            'type', 'main', 'stake', '10.00', 'actions', '["stand"]'::jsonb)
                                          ORDER BY k) FROM generate_series(0, %(per)s - 1) k)),
                               '', now() - r * interval '31 seconds', now() - r * interval '31 seconds',
                               now() - r * interval '31 seconds'
                        FROM generate_series(0, %(bets)s / %(per)s - 1) r""",
                    {**params, "table": table_id, "shoe": shoe_id})
        cur.execute(f"""INSERT INTO wagering_bet (round_id, player_id, type, seat, stake, state, outcome, returned,
                        idempotency_key, record_id, follow_double, follow_split, placed_at, settled_at)
                        SELECT rd.id, p.id, 'main', NULL, 10,
                               'settled', 'win', 20, 'ba:' || i, 'b' || (i %% %(per)s), false, false,
                               now() - (i / %(per)s) * interval '31 seconds', now()
                        FROM generate_series(0, %(bets)s - 1) i
                        JOIN tables_round rd ON rd.table_id = %(table)s AND rd.external_id = 'BA-' || (i / %(per)s)
                        JOIN accounts_player p ON p.code = 'ba-' || ({player.format(i="i")})""",
                    {**params, "table": table_id})
    with connection.cursor() as cur:
        cur.execute("ANALYZE")


# -- the load generator ---------------------------------------------------------------------------

def _client_proc(args):
    """One client process: ``threads`` threads requesting ``make_url`` targets for ``seconds``;
    returns the list of latencies (seconds) and the error count."""
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

    pool = [threading.Thread(target=run, args=(random.Random(seed * 100 + t),)) for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return latencies, errors[0]


def drive(targets):
    """Drive the server with CLIENTS clients for DURATION s on ``targets`` ([(path, token)]).
    Returns ``(requests/s, p50 ms, p95 ms, p99 ms, errors)``."""
    per_proc = CLIENTS // CLIENT_PROCS
    with multiprocessing.get_context("spawn").Pool(CLIENT_PROCS) as pool:
        results = pool.map(_client_proc, [(targets, per_proc, DURATION, n) for n in range(CLIENT_PROCS)])
    latencies = sorted(x for lat, _ in results for x in lat)
    errors = sum(e for _, e in results)
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [0] * 99
    return len(latencies) / DURATION, q[49] * 1000, q[94] * 1000, q[98] * 1000, errors


def start_server():
    env = {**os.environ, "ALLOWED_HOSTS": "127.0.0.1", "PLAYER_API_RATE": "100000000/min"}
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "config.wsgi", "-w", str(WORKERS),
                               "-b", f"127.0.0.1:{PORT}", "--log-level", "warning"], env=env)
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
    load()
    from datetime import UTC, datetime, timedelta

    from django.db.models import Max, Min
    from rest_framework.authtoken.models import Token

    from accounts.models import Player
    from wagering import selectors
    from wagering.models import Bet

    tokens = dict(Token.objects.filter(user__username__startswith="ba-").values_list("user__username", "key"))
    heavy = Player.objects.get(code="ba-0")
    sample = random.Random(7).sample(range(1, PLAYERS), 200)
    light = [("/api/v1/bets/", tokens[f"ba-{n}"]) for n in sample]
    span = Bet.objects.filter(player=heavy).aggregate(a=Min("placed_at"), b=Max("placed_at"))
    day = (span["a"] + (span["b"] - span["a"]) / 2).date()
    filtered_query = f"variant=boundless&outcome=win&date_from={day - timedelta(days=3)}&date_to={day}&tz=Europe/Berlin"
    light_bets = list(Bet.objects.filter(player__code__in=[f"ba-{n}" for n in sample])
                      .values_list("pk", "player__code")[:500])
    scenarios = {
        "list, random players (~90 bets each)": light,
        "list, the 100,000-bet player": [("/api/v1/bets/", tokens["ba-0"])],
        "filtered list, the 100,000-bet player": [(f"/api/v1/bets/?{filtered_query}", tokens["ba-0"])],
        "bet detail, random players": [(f"/api/v1/bets/{pk}", tokens[code]) for pk, code in light_bets],
    }
    midnight = datetime.combine(day - timedelta(days=3), datetime.min.time(), tzinfo=UTC)
    heavy_list = selectors.bets_for_player(heavy)
    heavy_filtered = heavy_list.filter(round__table__variant="boundless", outcome="win", placed_at__gte=midnight,
                                       placed_at__lt=midnight + timedelta(days=4))
    some_bet = heavy_list.prefetch_related("extras").first()
    floors = sql_floor({
        "list, the 100,000-bet player (page + totals)": lambda: (list(heavy_list[:51]), selectors.bet_totals(heavy_list)),
        "filtered list, the 100,000-bet player": lambda: (list(heavy_filtered[:51]), selectors.bet_totals(heavy_filtered)),
        "bet detail (row, replay, ledger)": lambda: (heavy_list.filter(pk=some_bet.pk).first(),
                                                   selectors.bet_replay(some_bet),
                                                   list(selectors.bet_ledger_entries(some_bet))),
    })
    server = start_server()
    try:
        rows = []
        for name, targets in scenarios.items():
            rps, p50, p95, p99, errors = drive(targets)
            rows += [(f"{name}: requests/s", rps, "req/s"), ("  p50 / p95 / p99", p50, f"/ {p95:.1f} / {p99:.1f} ms"),
                     ("  errors", errors, "")]
    finally:
        server.terminate()
        server.wait(10)
    rows += [(f"plain SQL, {name}", ms, f"ms ({n} statements)") for name, (ms, n) in floors.items()]
    report(f"player API, {CLIENTS} clients, gunicorn {WORKERS} workers, {DURATION} s per scenario "
           f"({BETS:,} bets, {PLAYERS:,} players)", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
