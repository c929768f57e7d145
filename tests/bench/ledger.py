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

The machine may be shared: the title shows the load average, and the CPU time one posting costs
the client process and its PostgreSQL backend (from ``/proc``, when the server is local) is printed
beside the rates. Exits 1 if the bulk path is more than 3x its floor."""

import multiprocessing
import os
import sys
import uuid
from decimal import Decimal

from tests.bench.common import Clock, durability, funded_wallets, report, setup

N_WALLETS = 10_000
N_ONE = 5_000
N_IN_TRANSACTION = 2_000
CLIENTS = 8

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


def _backend_pid():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _post_stakes(args):
    """One client process: post a stake on each wallet id, one committed transaction each.
    Returns ``(client CPU s, backend CPU s or None)`` spent on the postings."""
    from django.db import connection

    from accounts import services as ledger
    from accounts.models import Account

    house_id, wallet_ids, prefix = args
    house = Account.objects.get(pk=house_id)
    wallets = list(Account.objects.filter(pk__in=wallet_ids).select_related("currency"))
    backend = _backend_pid()
    client_cpu, backend_cpu = os.times(), _cpu_seconds(backend)
    for w in wallets:
        ledger.post_stake(wallet=w, house=house, amount="1.00", key=f"{prefix}:{w.pk}")
    used = os.times()
    after = _cpu_seconds(backend)
    connection.close()
    return (used.user + used.system - client_cpu.user - client_cpu.system,
            None if after is None or backend_cpu is None else after - backend_cpu)


def _floor_stakes(args):
    """One floor client: ``_FLOOR_ONE`` per wallet id on a bare psycopg connection in autocommit
    (one statement = one committed transaction), parameters bound by psycopg."""
    import psycopg
    from django.db import connection

    house_id, wallet_ids, prefix = args
    settings = {k: v for k, v in connection.get_connection_params().items()
                if k not in ("cursor_factory", "context", "prepare_threshold")}  # Django's own
    with psycopg.connect(**settings, autocommit=True) as conn:
        for pk in wallet_ids:
            conn.execute(_FLOOR_ONE, [f"{prefix}:{pk}", pk, house_id, pk])


def _in_processes(fn, chunks):
    with multiprocessing.get_context("fork").Pool(len(chunks)) as pool:
        return pool.map(fn, chunks)


def _per_posting_ms(costs, n):
    """``(client ms, backend ms or None)`` per posting from ``_post_stakes`` results."""
    client = sum(c for c, _ in costs) / n * 1000
    backends = [b for _, b in costs]
    return client, None if None in backends else sum(backends) / n * 1000


def main():
    setup()
    from django.db import connection, transaction

    from accounts import services as ledger
    from accounts.models import Currency, LedgerTransaction

    run = uuid.uuid4().hex[:8]
    load_before = os.getloadavg()[0]
    eur, _ = Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})
    house = ledger.house_account(name=f"table:bench-{run}", currency=eur)
    players, wallets = funded_wallets(f"bl-{run}", N_WALLETS, eur)
    ids = [w.pk for w in wallets]
    connection.close()  # no connection across fork

    clock = Clock()
    with clock.time("one"):
        one_cost = _post_stakes((house.pk, ids[:N_ONE], f"s1:{run}"))
    chunks = [(house.pk, ids[i::CLIENTS], f"s5:{run}") for i in range(CLIENTS)]
    with clock.time("concurrent"):
        costs = _in_processes(_post_stakes, chunks)
    with clock.time("floor_one"):
        _floor_stakes((house.pk, ids[:N_ONE], f"f1:{run}"))
    with clock.time("floor_concurrent"):
        _in_processes(_floor_stakes, [(house.pk, ids[i::CLIENTS], f"f5:{run}") for i in range(CLIENTS)])
    with clock.time("in_transaction"):
        for w in wallets[:N_IN_TRANSACTION]:
            with transaction.atomic():
                ledger.post_stake(wallet=w, house=house, amount="1.00", key=f"s6:{run}:{w.pk}")
    bulk = [ledger.Posting(f"s2:{run}:{w.pk}", "stake", w, house, Decimal("1.00")) for w in wallets]
    with clock.time("bulk"):
        ledger.post(bulk)
    hot = wallets[0]
    ledger.deposit(wallet=hot, amount="100000.00", key=f"dep-hot:{run}")
    with clock.time("hot"):
        for i in range(N_ONE):
            ledger.post_stake(wallet=hot, house=house, amount="1.00", key=f"s3:{run}:{i}")

    keys = [f"s4:{run}:{pk}" for pk in ids]
    with clock.time("floor"), transaction.atomic(), connection.cursor() as cur:
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

    expected = {"s1": N_ONE, "s5": N_WALLETS, "s6": N_IN_TRANSACTION, "s2": N_WALLETS, "s3": N_ONE}
    for prefix, n in expected.items():  # every posting the rates count was written
        assert LedgerTransaction.objects.filter(key__startswith=f"{prefix}:{run}:").count() == n, prefix

    s = clock.seconds
    ratio = s["bulk"] / s["floor"]
    one_client, one_backend = _per_posting_ms([one_cost], N_ONE)
    many_client, many_backend = _per_posting_ms(costs, N_WALLETS)
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
        ("CPU per posting, 1 client: client process", one_client, "ms"),
        (f"CPU per posting, {CLIENTS} clients: client processes", many_client, "ms"),
    ]
    if one_backend is not None and many_backend is not None:
        rows[-1:-1] = [("CPU per posting, 1 client: its PostgreSQL backend", one_backend, "ms")]
        rows.append((f"CPU per posting, {CLIENTS} clients: their PostgreSQL backends", many_backend, "ms"))
    report(f"ledger postings on {connection.vendor}, synchronous_commit={durability()}, "
           f"{os.cpu_count()} CPUs, load average {load_before:.1f} before / {os.getloadavg()[0]:.1f} after "
           f"({N_WALLETS:,} wallets; client processes as listed, one database connection each)", rows)
    return 0 if ratio <= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
