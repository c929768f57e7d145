"""``make bench-api``: the player API under 20 concurrent clients, beside its plain-SQL floor.

Data: the shared bets of ``tests.bench.load``, ``BENCH_BETS`` of them (default 1,000,000: 10,000
players, ~90 bets each, the heavy player a tenth of them; a round's bets share their placing time).
Starts gunicorn (``--workers`` processes of ``--threads`` threads, 127.0.0.1:``BENCH_API_PORT``
only: 2 cores), then for ``--seconds`` per scenario drives it with CLIENTS keep-alive connections
of ``wrk`` (Debian's C load generator: ``apt-get install wrk``; a Lua script picks each request's
path and credential) and prints requests/s, the 50th/95th/99th-percentile latency, the CPU that
gunicorn's workers and their PostgreSQL backends spent per request (milliseconds: the figures that
stay meaningful when the machine is shared; 2 cores / their sum bounds requests/s) and the CPU the
load generator used (cores, so that a client-bound run shows); beside each, the database time of
the same queries run as plain SQL (the ORM's statements, executed directly). Past 1,000,000 bets,
each CPU figure is printed beside its figure at 1,000,000 (measured first in the same run when the
data set grows from there, else the one kept by an earlier run: ``tests.bench.load.scale_rows``).
``--auth`` chooses how the players sign in: ``token`` (DRF tokens, ``Authorization: Token``),
``session`` (player sessions their operator minted, ``Authorization: Bearer``,
``accounts.operators.open_session``) or ``both`` (the default: each scenario driven with each, and
the ratio of their CPU per request printed, session / token).
``--chdir DIR`` serves another checkout (e.g. an older commit unpacked with ``git archive``) with
the same data and load, for a before/after ratio taken under the same machine load.
``--in-process N`` runs N requests per scenario through Django's test client instead and prints
the CPU per request (with ``--chdir``, of that checkout's code). Exits 1 when a request failed or
a list's CPU per request grew more than 1.2 times from 1,000,000 bets."""

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from tests.bench.common import cpu_seconds, report, setup, sized, verdict
from tests.bench.load import PLAYERS, ensure_bets, scale_rows, sizes

#: The data set's size: ``BENCH_BETS`` bets (default 1,000,000).
BETS = int(os.environ.get("BENCH_BETS", sized(1_000_000, 2_000)))
CLIENTS = 20
WARM_UP = sized(2, 1)  # seconds of each scenario not measured: connections, first token lookups, imports
PORT = int(os.environ.get("BENCH_API_PORT", "8765"))
APPLICATION_NAME = f"bench-api-{PORT}"  # gunicorn's database connections, to find their backends

# -- the load generator (wrk + Lua) ---------------------------------------------------------------

#: Per request: a random (path, Authorization header) pair. At the end: one JSON line with the counts and
#: the latency percentiles (microseconds).
LUA = """
local targets = %s
local counter = 0
function setup(thread) counter = counter + 1; thread:set("seed", counter) end
function init(args) math.randomseed(seed * 7919) end
function request()
  local t = targets[math.random(#targets)]
  return wrk.format("GET", t[1], {["Authorization"] = t[2]})
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('RESULT {"requests": %%d, "us": %%d, "p50": %%d, "p95": %%d, "p99": %%d, "errors": %%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95), latency:percentile(99),
    e.status + e.connect + e.read + e.write + e.timeout))
end
"""


def lua_script(targets):
    """The Lua source driving ``targets`` ([(path, Authorization header)])."""
    pairs = ", ".join(f"{{{json.dumps(path)}, {json.dumps(credential)}}}" for path, credential in targets)
    return LUA % f"{{{pairs}}}"


def _cpu(pids):
    """User + system CPU seconds so far of the processes ``pids`` (``common.cpu_seconds``)."""
    return sum(cpu_seconds(pid) for pid in pids)


def workers_of(server):
    """The pids of gunicorn's worker processes (the master's children)."""
    with open(f"/proc/{server.pid}/task/{server.pid}/children") as children:
        return [int(pid) for pid in children.read().split()]


def drive(targets, server, seconds):
    """Drive ``server`` with CLIENTS connections for ``seconds`` on ``targets`` ([(path, Authorization header)]),
    after WARM_UP seconds not counted. Returns ``(requests/s, p50 ms, p95 ms, p99 ms, errors,
    server CPU ms per request, client CPU in cores)``."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(lua_script(targets))
        script.flush()

        def wrk(duration):
            return subprocess.run(["wrk", "-t", "2", "-c", str(CLIENTS), "-d", f"{duration}s", "--timeout", "10s",
                                   "-s", script.name, f"http://127.0.0.1:{PORT}"],
                                  capture_output=True, text=True, check=True).stdout

        wrk(WARM_UP)
        workers = workers_of(server)
        server_cpu, before = _cpu(workers), {pid: cpu_seconds(pid) or 0 for pid in database_backends()}
        client_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = wrk(seconds)
        server_cpu = _cpu(workers) - server_cpu
        # A thread's first query opens its connection: a backend may have started during the run.
        database_cpu = sum((cpu_seconds(pid) or 0) - before.get(pid, 0) for pid in database_backends())
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
    client = (after.ru_utime - client_cpu.ru_utime) + (after.ru_stime - client_cpu.ru_stime)
    elapsed = result["us"] / 1e6
    ok = max(result["requests"] - result["errors"], 1)
    return (result["requests"] / elapsed, result["p50"] / 1000, result["p95"] / 1000, result["p99"] / 1000,
            result["errors"], server_cpu / ok * 1000, database_cpu / ok * 1000, client / elapsed)


def database_backends():
    """The pids of the PostgreSQL backends serving gunicorn's connections (by their application name)."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", [APPLICATION_NAME])
        return [pid for pid, in cur.fetchall()]


def start_server(workers, threads, chdir):
    """gunicorn serving ``config.wsgi`` from ``chdir`` on 127.0.0.1:PORT, the throttle out of the way;
    with ``threads`` above 1 the project's gthread worker (``config.web.gunicorn.ThreadWorker``), as
    README's "Web processes in production" starts it (without ``-k``, gunicorn swaps the sync worker
    ``gunicorn.conf.py`` names for its own gthread worker, whose refusals are HTML pages)."""
    url = os.environ["DATABASE_URL"]
    env = {**os.environ, "ALLOWED_HOSTS": "127.0.0.1", "PLAYER_API_RATE": "100000000/min",
           "DATABASE_URL": f"{url}{'&' if '?' in url else '?'}application_name={APPLICATION_NAME}"}
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "config.wsgi", "--chdir", chdir,
                               "-w", str(workers), "--threads", str(threads), "-b", f"127.0.0.1:{PORT}",
                               "--log-level", "warning",
                               *(["-k", "config.web.gunicorn.ThreadWorker"] if threads > 1 else [])], env=env)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{PORT}/api/v1/me", timeout=1)
        except urllib.error.HTTPError:
            if len(workers_of(server)) == workers:
                return server  # 401: up
        except OSError:
            pass
        time.sleep(0.2)
    server.terminate()
    raise RuntimeError("gunicorn did not start")


def sql_floor(reads, runs=30):
    """``{name: (mean milliseconds, statements)}``: the SQL statements each read (``{name: callable}``)
    makes, captured once with their parameters (through Django's cursor, or
    ``accounts.sql.execute_binary``), then run ``runs`` times as plain SQL on one connection."""
    from django.db import connection

    from accounts import sql

    floor = {}
    for name, read in reads.items():
        statements, binary = [], sql.execute_binary

        def captured(statement, params, _binary=binary, _statements=statements, **options):
            _statements.append(lambda: _binary(statement, params, **options))
            return _binary(statement, params, **options)

        def through_django(execute, statement, params, many, context, _statements=statements):
            _statements.append(lambda: _plain(statement, params))
            return execute(statement, params, many, context)

        sql.execute_binary = captured
        try:
            with connection.execute_wrapper(through_django):
                read()
        finally:
            sql.execute_binary = binary
        start = time.perf_counter()
        for _ in range(runs):
            for statement in statements:
                statement()
        floor[name] = ((time.perf_counter() - start) / runs * 1000, len(statements))
    return floor


def _plain(statement, params):
    """Run ``statement`` with ``params`` on a raw cursor of Django's connection; fetch its rows."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(statement, params)
        return cur.fetchall() if cur.description else None


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=4, help="gunicorn worker processes (default 4: 2 per core)")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads per worker (default 1: the sync worker; above 1 the project's gthread worker, "
                             "whose threads share the GIL and keep connections alive)")
    parser.add_argument("--seconds", type=int, default=sized(10, 1), help="duration of each scenario (default 10)")
    parser.add_argument("--chdir", default=os.getcwd(), help="the checkout gunicorn serves (default: this one)")
    parser.add_argument("--only", help="run only the scenarios whose name contains this")
    parser.add_argument("--auth", choices=("token", "session", "both"),
                        default=os.environ.get("BENCH_API_AUTH", "both"),
                        help="players sign in with DRF tokens, operator-minted sessions, or both in turn (default)")
    parser.add_argument("--in-process", type=int, metavar="N",
                        help="instead: N requests per scenario through Django's test client, CPU per request")
    return parser.parse_args()


def in_process(scenarios, requests):
    """``{name: CPU ms per request}``: ``requests`` requests of each scenario (its targets in turn)
    through Django's test client in this process: no server, no sockets, no load generator, so the
    least noisy figure on a shared machine (the database's CPU is not in it)."""
    from django.test import Client

    client, cpu = Client(), {}
    for name, targets in scenarios.items():
        for path, credential in targets[:20]:  # warm: imports, connection, token lookups
            assert client.get(path, HTTP_AUTHORIZATION=credential).status_code == 200
        start = time.process_time()
        for i in range(requests):
            path, credential = targets[i % len(targets)]
            client.get(path, HTTP_AUTHORIZATION=credential)
        cpu[name] = (time.process_time() - start) / requests * 1000
    return cpu


def main():
    args = arguments()
    if args.in_process and os.path.realpath(args.chdir) != os.path.realpath(os.getcwd()):
        # The other checkout's code in this process: run this script there.
        command = [sys.executable, os.path.abspath(__file__), "--in-process", str(args.in_process),
                   "--chdir", args.chdir, "--auth", args.auth, *(["--only", args.only] if args.only else [])]
        return subprocess.run(command, cwd=args.chdir, env={**os.environ, "PYTHONPATH": args.chdir}).returncode
    if not args.in_process and shutil.which("wrk") is None:
        sys.exit("bench-api needs the wrk load generator: apt-get install wrk")
    os.environ.update({"ALLOWED_HOSTS": "127.0.0.1,testserver", "PLAYER_API_RATE": "100000000/min"})
    setup()
    status = 0
    for n in sizes(BETS):
        status |= measure(args, ensure_bets(n))
    return status


SESSION = " (session)"  # the suffix of a scenario's name driven with player sessions


def scenarios_of(loaded, only, auth):
    """``(scenarios, heavy player, the filtered list's first day)``: ``{name: [(path, Authorization
    header)]}`` over ``loaded`` (``tests.bench.load.Loaded``), those whose name contains ``only`` if
    given; with ``auth`` ``token`` the players sign in with DRF tokens, ``session`` with sessions
    their operator minted (each scenario's name + ``SESSION``), ``both``: each scenario both ways."""
    from datetime import timedelta

    from django.db.models import Max, Min
    from rest_framework.authtoken.models import Token

    from accounts.models import Player
    from accounts.operators import open_session
    from wagering.models import Bet

    heavy = Player.objects.get(code=loaded.heavy_code)
    sample = [f"bench-p-{n}" for n in random.Random(7).sample(range(2, PLAYERS + 1), min(200, PLAYERS - 1))]
    players = {p.code: p for p in Player.objects.filter(code__in=sample + [heavy.code]).select_related("operator")}
    credentials = {}
    if auth in ("token", "both"):
        credentials[""] = {code: "Token " + Token.objects.get_or_create(user=player.user)[0].key
                           for code, player in players.items()}
    if auth in ("session", "both"):
        credentials[SESSION] = {code: "Bearer " + open_session(operator=player.operator, player=code,
                                                               currency="EUR")[1]
                                for code, player in players.items()}
    span = Bet.objects.filter(player=heavy).aggregate(a=Min("placed_at"), b=Max("placed_at"))
    day = (span["a"] + (span["b"] - span["a"]) / 2).date()
    filtered_query = (f"variant=boundless&outcome=lose&date_from={day - timedelta(days=3)}&date_to={day}"
                      "&tz=Europe/Berlin")
    light_bets = list(Bet.objects.filter(player__code__in=sample).values_list("pk", "player__code")[:500])
    paths = {
        "list, random players": [("/api/v1/bets/", code) for code in sample],
        "list, the heavy player": [("/api/v1/bets/", heavy.code)],
        "filtered list, the heavy player": [(f"/api/v1/bets/?{filtered_query}", heavy.code)],
        "filtered list + totals=true, the heavy player": [(f"/api/v1/bets/?{filtered_query}&totals=true",
                                                           heavy.code)],
        "bet detail, random players": [(f"/api/v1/bets/{pk}", code) for pk, code in light_bets],
    }
    scenarios = {name + suffix: [(path, given[code]) for path, code in targets]
                 for name, targets in paths.items() if not only or only in name
                 for suffix, given in credentials.items()}
    return scenarios, heavy, day


def session_ratios(figures):
    """Rows of each scenario's ``figures`` (``{name: CPU ms per request}``) driven both ways: the
    ratio of its session figure to its token figure."""
    return [(f"  {name}: session / token", figures[name + SESSION] / figures[name], "x")
            for name in figures if name + SESSION in figures and figures[name]]


def measure(args, loaded):
    """Run the scenarios over ``loaded`` and print their figures (and, past ``REFERENCE`` bets,
    their growth from there: ``tests.bench.load.scale_rows``). Returns the exit status: 1 for a
    failed request or a list's CPU per request grown too much."""
    scenarios, heavy, day = scenarios_of(loaded, args.only, args.auth)
    heavy_bets = heavy.bets.count()
    if args.in_process:
        cpu = in_process(scenarios, args.in_process)
        report(f"player API in process (Django's test client, served from {args.chdir}), {args.in_process} "
               f"requests per scenario ({loaded.bets:,} bets), load average {os.getloadavg()[0]:.1f}",
               [(name, ms, "ms CPU per request") for name, ms in cpu.items()])
        if session_ratios(cpu):
            report("player API in process: CPU per request, player sessions against DRF tokens", session_ratios(cpu))
        return 0
    from datetime import UTC, datetime, timedelta

    from settlement.selectors import bet_ledger_rows, bet_replay
    from wagering import selectors

    midnight = datetime.combine(day - timedelta(days=3), datetime.min.time(), tzinfo=UTC)
    heavy_list = selectors.bets_for_player(heavy)
    heavy_filtered = heavy_list.filter(table__variant="boundless", outcome="lose", placed_at__gte=midnight,
                                       placed_at__lt=midnight + timedelta(days=4))
    some_bet = heavy.bets.values_list("pk", flat=True).first()

    def detail():
        bet = selectors.bet_detail_row(heavy, some_bet)
        return bet_replay(bet), bet_ledger_rows(bet, selectors.extras_of(bet))

    page = 21  # the default page and its look-ahead row
    floors = sql_floor({
        "list page, the heavy player": lambda: list(heavy_list.values(*selectors.BET_ROW)[:page]),
        "filtered list page, the heavy player": lambda: list(heavy_filtered.values(*selectors.BET_ROW)[:page]),
        "totals of that filtered range": lambda: selectors.bet_totals(heavy_filtered),
        "bet detail (row, replay, ledger)": detail,
    })
    server = start_server(args.workers, args.threads, args.chdir)
    rows, figures, server_cpu, failed = [], {}, {}, 0
    try:
        for name, targets in scenarios.items():
            rps, p50, p95, p99, errors, server_ms, database_ms, cores = drive(targets, server, args.seconds)
            rows += [(f"{name}: requests/s", rps, "req/s"), ("  p50 / p95 / p99", p50, f"/ {p95:.1f} / {p99:.1f} ms"),
                     ("  errors (non-2xx, socket)", errors, ""),
                     ("  CPU per request: gunicorn / PostgreSQL", server_ms, f"/ {database_ms:.2f} ms"),
                     ("  load generator CPU", cores, "cores")]
            figures.update({f"{name}: gunicorn CPU ms": server_ms, f"{name}: PostgreSQL CPU ms": database_ms})
            server_cpu[name] = server_ms
            failed += errors
    finally:
        server.terminate()
        server.wait(10)
    rows += [(f"plain SQL, {name}", ms, f"ms ({n} statements)") for name, (ms, n) in floors.items()]
    report(f"player API, {CLIENTS} clients (wrk), gunicorn {args.workers} workers x {args.threads} threads, "
           f"{args.seconds} s per scenario ({loaded.bets:,} bets, {PLAYERS:,} players, the heavy player's "
           f"{heavy_bets:,}), served from {args.chdir}, load average {os.getloadavg()[0]:.1f}", rows)
    if session_ratios(server_cpu):
        report("player API: gunicorn CPU per request, player sessions against DRF tokens", session_ratios(server_cpu))
    lists = {name for name in figures if "list" in name and "gunicorn" in name}
    title, grown, ok = scale_rows("api", loaded, figures, lists)
    if grown:
        report(f"player API {title}", grown)
    if failed:
        print(f"FAIL: {failed:.0f} requests failed")
    return 1 if failed else verdict(ok)


if __name__ == "__main__":
    sys.exit(main())
