"""``make bench-ledger``: ledger postings per second on PostgreSQL.

(a) 10,000 different wallets, one 1.00 stake each: posted one by one, each posting its own
committed database transaction (``accounts.services.post_stake`` called outside any transaction,
as a wallet service answers one request), from 1 client and from CLIENTS concurrent client
processes; the same inside a caller's transaction (``BEGIN``, the posting, ``COMMIT``: how the
wagering services post, beside their own rows); and in one bulk ``accounts.services.post`` call
(the settlement path). (b) one hot wallet, one by one. Beside them, floors written by hand in
plain SQL on a bare psycopg connection, with no checks: one posting per transaction (one statement:
transaction row, two entries, balance), from 1 and from CLIENTS processes; and all 10,000 rows in
one transaction. Every one-by-one posting waits for its commit (``synchronous_commit`` is printed).
The one-by-one runs and their floors take turns (ROUNDS times each), so that load changes hit both.

The machine may be shared: the title shows the load average, and the CPU time one posting costs
the client process and its PostgreSQL backend (from ``/proc``, when the server is local) is printed
beside the rates. Exits 1 if the bulk path is more than 3x its floor."""

import multiprocessing
import os
import sys
import time
import uuid
from collections import defaultdict
from contextlib import contextmanager
from decimal import Decimal

from tests.bench.common import durability, funded_wallets, report, setup

N_WALLETS = 10_000
N_ONE = 5_000
N_IN_TRANSACTION = 2_000
CLIENTS = 8
ROUNDS = 2

_FLOOR_ONE = """WITH txn AS (
        INSERT INTO accounts_ledgertransaction (key, kind, currency_id, memo, created_at)
        VALUES (%s, 'stake', 'EUR', '', now()) RETURNING id),
    entries AS (
        INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after)
        SELECT txn.id, a, x, b FROM txn, (VALUES (%s::bigint, -1::numeric, 0::numeric),
                                                  (%s::bigint, 1::numeric, NULL::numeric)) AS v(a, x, b))
    UPDATE accounts_account SET balance = balance - 1 WHERE id = %s"""


def _cpu_seconds(pid):
    """User + system CPU seconds of process ``pid`` so far (``/proc``; None where unreadable)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cpu_spent(backend_pid, block):
    """Run ``block()``; return the CPU seconds it cost ``(this process, PostgreSQL backend
    ``backend_pid`` or None where ``/proc`` does not show it)``."""
    client, backend = os.times(), _cpu_seconds(backend_pid)
    block()
    used, after = os.times(), _cpu_seconds(backend_pid)
    return (used.user + used.system - client.user - client.system,
            None if after is None or backend is None else after - backend)


def _post_stakes(args):
    """One client process: post a stake on each wallet id, one committed transaction each.
    Returns the CPU seconds spent on the postings (``_cpu_spent``)."""
    from django.db import connection

    from accounts import services as ledger
    from accounts.models import Account

    house_id, wallet_ids, prefix = args
    house = Account.objects.get(pk=house_id)
    wallets = list(Account.objects.filter(pk__in=wallet_ids).select_related("currency"))
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]

    def post_all():
        for w in wallets:
            ledger.post_stake(wallet=w, house=house, amount="1.00", key=f"{prefix}:{w.pk}")

    spent = _cpu_spent(backend, post_all)
    connection.close()
    return spent


def _floor_stakes(args):
    """One floor client: ``_FLOOR_ONE`` per wallet id on a bare psycopg connection in autocommit
    (one statement = one committed transaction), parameters bound by psycopg. Returns the CPU
    seconds spent (``_cpu_spent``)."""
    import psycopg
    from django.db import connection

    house_id, wallet_ids, prefix = args
    settings = {k: v for k, v in connection.get_connection_params().items()
                if k not in ("cursor_factory", "context", "prepare_threshold")}  # Django's own
    with psycopg.connect(**settings, autocommit=True) as conn:
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        return _cpu_spent(backend, lambda: [conn.execute(_FLOOR_ONE, [f"{prefix}:{pk}", pk, house_id, pk])
                                            for pk in wallet_ids])


_seconds = defaultdict(float)


@contextmanager
def timed(name):
    """Add the wall-clock seconds of the block to ``_seconds[name]``."""
    start = time.perf_counter()
    yield
    _seconds[name] += time.perf_counter() - start


def _in_processes(fn, chunks):
    with multiprocessing.get_context("fork").Pool(len(chunks)) as pool:
        return pool.map(fn, chunks)


def _cpu_rows(label, costs, n):
    """Report rows: CPU milliseconds per posting of the client processes and of their PostgreSQL
    backends (when ``/proc`` shows them) from ``_cpu_spent`` results ``costs`` for ``n`` postings."""
    rows = [(f"{label}: client processes", sum(c for c, _ in costs) / n * 1000, "ms")]
    if all(b is not None for _, b in costs):
        rows.append((f"{label}: their PostgreSQL backends", sum(b for _, b in costs) / n * 1000, "ms"))
    return rows


def main():
    setup()
    from django.db import connection, transaction

    from accounts import services as ledger
    from accounts.models import Currency, LedgerTransaction

    run = uuid.uuid4().hex[:8]
    load_before = os.getloadavg()[0]
    eur, _ = Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})
    house = ledger.house_account(name=f"table:bench-{run}", currency=eur, operator=ledger.default_operator())
    players, wallets = funded_wallets(f"bl-{run}", N_WALLETS, eur)
    ids = [w.pk for w in wallets]
    connection.close()  # no connection across fork

    # Each one-by-one rate and its floor run in turns, ROUNDS times on a share of the wallets, so
    # that a change of the machine's load (it may be shared) falls on both alike.
    one_costs, costs, floor_costs = [], [], []
    for r in range(ROUNDS):
        share = ids[r::ROUNDS]
        with timed("one"):
            one_costs.append(_post_stakes((house.pk, share[:N_ONE // ROUNDS], f"s1:{run}")))
        with timed("floor_one"):
            _floor_stakes((house.pk, share[:N_ONE // ROUNDS], f"f1:{run}"))
        with timed("concurrent"):
            costs += _in_processes(_post_stakes,
                                   [(house.pk, share[i::CLIENTS], f"s5:{run}") for i in range(CLIENTS)])
        with timed("floor_concurrent"):
            floor_costs += _in_processes(_floor_stakes,
                                         [(house.pk, share[i::CLIENTS], f"f5:{run}") for i in range(CLIENTS)])
    bulk = [ledger.Posting(f"s2:{run}:{w.pk}", "stake", w, house, Decimal("1.00")) for w in wallets]
    with timed("bulk"):
        ledger.post(bulk)
    keys = [f"s4:{run}:{pk}" for pk in ids]  # the bulk floor, right after the bulk path
    with timed("floor"), transaction.atomic(), connection.cursor() as cur:
        cur.execute("SELECT id FROM accounts_account WHERE id = ANY(%s) ORDER BY id FOR UPDATE", [ids])
        cur.execute("""INSERT INTO accounts_ledgertransaction (key, kind, currency_id, memo, created_at)
                       SELECT k, 'stake', 'EUR', '', now() FROM unnest(%s::text[]) AS k RETURNING id""", [keys])
        txn_ids = [row[0] for row in cur.fetchall()]
        cur.execute("""INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after)
                       SELECT t, a, x, b FROM unnest(%s::bigint[], %s::bigint[], %s::numeric[], %s::numeric[])
                       AS v(t, a, x, b)""",
                    [txn_ids * 2, ids + [house.pk] * len(ids), [-1] * len(ids) + [1] * len(ids),
                     [997] * len(ids) + [None] * len(ids)])
        cur.execute("""UPDATE accounts_account SET balance = balance - 1 WHERE id = ANY(%s)""", [ids])

    with timed("in_transaction"):
        for w in wallets[:N_IN_TRANSACTION]:
            with transaction.atomic():
                ledger.post_stake(wallet=w, house=house, amount="1.00", key=f"s6:{run}:{w.pk}")
    hot = wallets[0]
    ledger.deposit(wallet=hot, amount="100000.00", key=f"dep-hot:{run}")
    with timed("hot"):
        for i in range(N_ONE):
            ledger.post_stake(wallet=hot, house=house, amount="1.00", key=f"s3:{run}:{i}")

    expected = {"s1": N_ONE, "s5": N_WALLETS, "s6": N_IN_TRANSACTION, "s2": N_WALLETS, "s3": N_ONE}
    for prefix, n in expected.items():  # every posting the rates count was written
        assert LedgerTransaction.objects.filter(key__startswith=f"{prefix}:{run}:").count() == n, prefix

    s = _seconds
    ratio = s["bulk"] / s["floor"]
    rows = [
        ("(a) one by one, 1 client", N_ONE / s["one"], "postings/s"),
        (f"(a) one by one, {CLIENTS} client processes", N_WALLETS / s["concurrent"], "postings/s"),
        ("(a) one by one inside a caller's transaction, 1 client", N_IN_TRANSACTION / s["in_transaction"],
         "postings/s"),
        ("(a) 10,000 wallets, bulk post()", N_WALLETS / s["bulk"], "postings/s"),
        ("(b) one hot wallet, one by one, 1 client", N_ONE / s["hot"], "postings/s"),
        ("floor: plain SQL one by one, 1 client", N_ONE / s["floor_one"], "postings/s"),
        (f"floor: plain SQL one by one, {CLIENTS} client processes", N_WALLETS / s["floor_concurrent"],
         "postings/s"),
        ("floor: plain SQL, 10,000 in one transaction", N_WALLETS / s["floor"], "postings/s"),
        ("one by one / floor time ratio, 1 client", s["one"] / s["floor_one"], "x"),
        (f"one by one / floor time ratio, {CLIENTS} clients",
         s["concurrent"] / s["floor_concurrent"], "x"),
        ("bulk / floor time ratio", ratio, "x (promise: <= 3)"),
    ]
    rows += _cpu_rows("CPU per posting, 1 client", one_costs, N_ONE)
    rows += _cpu_rows(f"CPU per posting, {CLIENTS} clients", costs, N_WALLETS)
    rows += _cpu_rows(f"floor CPU per posting, {CLIENTS} clients", floor_costs, N_WALLETS)
    report(f"ledger postings on {connection.vendor}, synchronous_commit={durability()}, "
           f"{os.cpu_count()} CPUs, load average {load_before:.1f} before / {os.getloadavg()[0]:.1f} after "
           f"({N_WALLETS:,} wallets; client processes as listed, one database connection each)", rows)
    return 0 if ratio <= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
