"""Shared pieces of the benchmark scripts (``make bench-<name>`` = ``python -m tests.bench.<name>``).

Benchmarks run on the database of ``DATABASE_URL`` (``make`` points it at a dedicated
``blackjack_bench`` PostgreSQL database, migrated first), print their numbers, and never assert a
timing; a benchmark may exit non-zero on a ratio it promises (``verdict``).

``BENCH_SMOKE=1`` (``make bench-smoke``) runs a benchmark at a tiny size (``sized``) to prove it
runs: every error still fails it, a ratio it promises never does."""

import os
import subprocess
import time
from contextlib import contextmanager

import django

#: A smoke run (``BENCH_SMOKE=1``): tiny sizes, no promise enforced.
SMOKE = os.environ.get("BENCH_SMOKE") == "1"


def sized(full, smoke):
    """``smoke`` in a smoke run, else ``full``: the size of something a benchmark makes."""
    return smoke if SMOKE else full


def verdict(ok):
    """The exit status of a benchmark whose promises hold when ``ok``: 1 when they do not, except
    in a smoke run (whose sizes promise nothing)."""
    return 0 if ok or SMOKE else 1


def setup():
    """Configure Django for a script and migrate the benchmark database."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def quiesce(*tables):
    """Let the set-up's bulk writes settle before a timed phase, as on a platform in service:
    vacuum and analyze ``tables`` (models) now, as autovacuum would soon after a bulk load (and
    might then do in the middle of the timing)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE) " + ", ".join(connection.ops.quote_name(t._meta.db_table) for t in tables))


def cpu_seconds(pid):
    """User + system CPU seconds of process ``pid`` so far (``/proc``; None where unreadable, e.g.
    a database server on another machine)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def backend_pid():
    """The pid of the PostgreSQL backend serving Django's connection."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


class Clock:
    """``with clock.time("name"):`` records wall-clock seconds per name."""

    def __init__(self):
        self.seconds = {}

    @contextmanager
    def time(self, name):
        start = time.perf_counter()
        yield
        self.seconds[name] = time.perf_counter() - start


def durability():
    """PostgreSQL's ``synchronous_commit`` for this connection (``on`` = each commit waits for the
    WAL flush: the cost of one-by-one writes), printed beside the numbers."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return cursor.fetchone()[0]


def report(title, rows):
    """Print ``rows`` of (label, value, unit) under ``title`` as an aligned table."""
    print(f"\n{title}")
    width = max(len(label) for label, _, _ in rows)
    for label, value, unit in rows:
        shown = f"{value:,.0f}" if isinstance(value, (int, float)) and abs(value) >= 100 else f"{value:,.2f}"
        print(f"  {label:<{width}}  {shown:>14} {unit}")


def funded_wallets(prefix, n, currency, amount="1000.00"):
    """``n`` new players (``<prefix>-<i>``) of the default operator, each with a wallet in
    ``currency`` (a ``Currency``) holding ``amount`` (deposited through one bulk ledger post) and a
    live session in it (``open_sessions``). Returns ``(players, wallets)``."""
    from decimal import Decimal

    from django.contrib.auth import get_user_model

    from accounts import services as ledger
    from accounts.models import Account, Player

    operator = ledger.default_operator()
    user_model = get_user_model()
    users = user_model.objects.bulk_create([user_model(username=f"{prefix}-{i}") for i in range(n)])
    players = Player.objects.bulk_create([Player(user=u, operator=operator, code=u.username,
                                                 game_code=operator.game_code(u.username)) for u in users])
    wallets = Account.objects.bulk_create([Account(kind="wallet", operator=operator, player=p, currency=currency)
                                           for p in players])
    for w in wallets:
        w.currency = currency
    cashier = ledger.cashier_account(currency=currency, operator=operator)
    ledger.post([ledger.Posting(f"dep:{prefix}:{w.pk}", "deposit", cashier, w, Decimal(amount)) for w in wallets])
    open_sessions(players, currency)
    return players, wallets


def open_sessions(players, currency):
    """A live session in ``currency`` for each of ``players`` (``Player`` rows or pks), as their
    operator opens one when they come to play, and their operators' agreements with the default
    studio (the benchmarks' tables'): the game server takes bets only from players in session
    whose operator agrees with the table's studio."""
    import secrets
    from datetime import timedelta

    from django.conf import settings
    from django.utils import timezone

    from accounts.models import Player, PlayerSession
    from accounts.operators import token_hash
    from tables.models import StudioAgreement, default_studio

    ids = [getattr(p, "pk", p) for p in players]
    operators = Player.objects.filter(pk__in=ids).values_list("operator_id", flat=True).distinct()
    StudioAgreement.objects.bulk_create([StudioAgreement(studio_id=default_studio(), operator_id=o) for o in operators],
                                        ignore_conflicts=True)
    now = timezone.now()
    PlayerSession.objects.bulk_create([
        PlayerSession(token_hash=token_hash(secrets.token_urlsafe(32)), player_id=p, currency=currency,
                      last_used_at=now, expires_at=now + timedelta(seconds=settings.PLAYER_SESSION_LIFETIME_SECONDS))
        for p in ids], batch_size=5000)


def code_version():
    """The commit of the code measured (``git describe --always --dirty``), or ``unknown``."""
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                              check=True, cwd=os.path.dirname(__file__)).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def remember(benchmark, bets, figures):
    """Keep ``figures`` (``{name: value}``) that ``benchmark`` measured over a data set of ``bets``
    bets in the bench database (table ``bench_figure``, created if missing), with the code's
    version (``code_version``), so that a later run over a grown data set can compare."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("""CREATE TABLE IF NOT EXISTS bench_figure (benchmark text, name text, bets bigint,
                       value double precision, code text, measured_at timestamptz DEFAULT now())""")
        version = code_version()
        cur.executemany("INSERT INTO bench_figure (benchmark, name, bets, value, code) VALUES (%s, %s, %s, %s, %s)",
                        [(benchmark, name, bets, value, version) for name, value in figures.items()])


def recalled(benchmark, bets):
    """``{name: (value, code version, measured_at)}``: the latest figures ``benchmark`` kept
    (``remember``) over a data set of ``bets`` bets; empty when there are none."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT to_regclass('bench_figure') IS NOT NULL")
        if not cur.fetchone()[0]:
            return {}
        cur.execute("""SELECT DISTINCT ON (name) name, value, code, measured_at FROM bench_figure
                       WHERE benchmark = %s AND bets = %s ORDER BY name, measured_at DESC""", [benchmark, bets])
        return {name: (value, code, at) for name, value, code, at in cur.fetchall()}
