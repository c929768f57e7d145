"""``make bench-ledger``: ledger postings per second on PostgreSQL.

(a) 10,000 different wallets: posted one by one (one database transaction each, from one client and
from CLIENTS concurrent client processes, as the game server's requests arrive) and in one bulk
``accounts.services.post`` call (the settlement path); (b) one hot wallet, one by one. Beside them,
the floor: the same rows (transactions, two entries each, wallet balances) written by hand-written
SQL in one transaction. Exits 1 if the bulk path is more than 3x the floor."""

import multiprocessing
import sys
import uuid
from decimal import Decimal

from tests.bench.common import Clock, durability, funded_wallets, report, setup

N_WALLETS = 10_000
N_HOT = 5_000
CLIENTS = 8


def _post_stakes(args):
    """One client process: post a stake on each wallet id, one transaction each."""
    from django.db import connection

    from accounts import services as ledger
    from accounts.models import Account

    house_id, wallet_ids, prefix = args
    house = Account.objects.get(pk=house_id)
    for w in Account.objects.filter(pk__in=wallet_ids).select_related("currency"):
        ledger.post_stake(wallet=w, house=house, amount="1.00", key=f"{prefix}:{w.pk}")
    connection.close()


def main():
    setup()
    from django.db import connection, transaction

    from accounts import services as ledger
    from accounts.models import Currency

    run = uuid.uuid4().hex[:8]
    eur, _ = Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})
    house = ledger.house_account(name=f"table:bench-{run}", currency=eur)
    players, wallets = funded_wallets(f"bl-{run}", N_WALLETS, eur)

    clock = Clock()
    single = wallets[:N_HOT]
    with clock.time("one_by_one"):
        for w in single:
            ledger.post_stake(wallet=w, house=house, amount="1.00", key=f"s1:{run}:{w.pk}")
    connection.close()
    chunks = [([house.pk, [w.pk for w in wallets[i::CLIENTS]], f"s5:{run}"]) for i in range(CLIENTS)]
    with clock.time("concurrent"), multiprocessing.get_context("fork").Pool(CLIENTS) as pool:
        pool.map(_post_stakes, chunks)
    bulk = [ledger.Posting(f"s2:{run}:{w.pk}", "stake", w, house, Decimal("1.00")) for w in wallets]
    with clock.time("bulk"):
        ledger.post(bulk)
    hot = wallets[0]
    ledger.deposit(wallet=hot, amount="100000.00", key=f"dep-hot:{run}")
    with clock.time("hot"):
        for i in range(N_HOT):
            ledger.post_stake(wallet=hot, house=house, amount="1.00", key=f"s3:{run}:{i}")

    ids = [w.pk for w in wallets]
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

    s = clock.seconds
    ratio = s["bulk"] / s["floor"]
    report(f"ledger postings on {connection.vendor}, synchronous_commit={durability()} "
           f"({N_WALLETS:,} wallets; hot wallet {N_HOT:,} postings)", [
        ("(a) one by one, 1 client", N_HOT / s["one_by_one"], "postings/s"),
        (f"(a) one by one, {CLIENTS} concurrent clients", N_WALLETS / s["concurrent"], "postings/s"),
        ("(a) 10,000 wallets, bulk post()", N_WALLETS / s["bulk"], "postings/s"),
        ("(b) one hot wallet, one by one", N_HOT / s["hot"], "postings/s"),
        ("floor: hand-written SQL, one transaction", N_WALLETS / s["floor"], "postings/s"),
        ("bulk / floor time ratio", ratio, "x (promise: <= 3)"),
    ])
    return 0 if ratio <= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
