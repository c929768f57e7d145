"""``make bench-wagering``: bets placed per second through the service layer on PostgreSQL, for one
boundless round with 20,000 players.

(a) ``wagering.services.place_bet`` one by one (one database transaction per bet, as single game
server requests arrive), on N_SINGLE players; (b) ``wagering.services.place_bets`` with all 20,000
bets in one call (the bulk path the game server uses: one ledger ``post`` with 20,000 postings).
Beside them, the floor: the same rows (bets, ledger transactions, two entries each, wallet
balances, ``bet_placed`` events) written by hand-written SQL in one transaction. Prints the
numbers and the bulk / floor ratio; exits 1 if the bulk path is more than 3x the floor."""

import sys
import uuid

from tests.bench.common import Clock, durability, funded_wallets, report, setup

N_PLAYERS = 20_000
N_SINGLE = 2_000


def main():
    setup()
    from django.db import connection, transaction

    from accounts import services as ledger
    from accounts.models import Currency
    from tables.models import Table, TableLimit
    from tables.services import open_round
    from wagering.services import place_bet, place_bets

    run = uuid.uuid4().hex[:8]
    eur, _ = Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})
    rounds = []
    for name in ("single", "bulk", "floor"):
        table = Table.objects.create(code=f"bw-{run}-{name}", name=name, variant="boundless", currency=eur)
        TableLimit.objects.create(table=table, bet_type="main", min_stake=1, max_stake=1000, chip_step=1)
        rounds.append(open_round(table_code=table.code, external_id="R-1", shoe=1))
    single_round, bulk_round, floor_round = rounds
    players, wallets = funded_wallets(f"bw-{run}", N_PLAYERS, eur)

    clock = Clock()
    with clock.time("one_by_one"):
        for p in players[:N_SINGLE]:
            place_bet(round_id=single_round.pk, key=f"s:{run}:{p.pk}", player=p.code, type="main", stake="5.00")
    requests = [{"key": f"b:{run}:{p.pk}", "player": p.code, "type": "main", "stake": "5.00"} for p in players]
    with clock.time("bulk"):
        outcomes = place_bets(round_id=bulk_round.pk, bets=requests)
    assert not [o for o in outcomes if o.error], "bulk bets rejected"

    house = ledger.house_account(name=floor_round.table.house_name, currency=eur)
    ids = [w.pk for w in wallets]
    player_ids = [p.pk for p in players]
    keys = [f"f:{run}:{p.pk}" for p in players]
    n = len(ids)
    with clock.time("floor"), transaction.atomic(), connection.cursor() as cur:
        cur.execute("SELECT id FROM tables_round WHERE id = %s FOR SHARE", [floor_round.pk])
        cur.execute("SELECT id FROM accounts_account WHERE id = ANY(%s) ORDER BY id FOR UPDATE", [ids])
        cur.execute("""INSERT INTO wagering_bet (round_id, table_id, currency_id, player_id, type, stake, state,
                                                 idempotency_key, record_id, follow_double, follow_split, placed_at)
                       SELECT %s, %s, 'EUR', p, 'main', 5, 'placed', k, k, false, false, now()
                       FROM unnest(%s::bigint[], %s::text[]) AS v(p, k) RETURNING id""",
                    [floor_round.pk, floor_round.table_id, player_ids, keys])
        bet_ids = [row[0] for row in cur.fetchall()]
        cur.execute("""INSERT INTO accounts_ledgertransaction (key, kind, currency_id, memo, created_at)
                       SELECT 'stake:' || b, 'stake', 'EUR', '', now() FROM unnest(%s::bigint[]) AS b
                       RETURNING id""", [bet_ids])
        txn_ids = [row[0] for row in cur.fetchall()]
        cur.execute("""INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after)
                       SELECT t, a, x, b FROM unnest(%s::bigint[], %s::bigint[], %s::numeric[], %s::numeric[])
                       AS v(t, a, x, b)""",
                    [txn_ids * 2, ids + [house.pk] * n, [-5] * n + [5] * n, [990] * n + [None] * n])
        cur.execute("UPDATE accounts_account SET balance = balance - 5 WHERE id = ANY(%s)", [ids])
        cur.execute("""INSERT INTO tables_roundevent (round_id, kind, actor, payload, created_at)
                       SELECT %s, 'bet_placed', '', jsonb_build_object('bet', b, 'record_id', k, 'stake', '5.00'),
                              now()
                       FROM unnest(%s::bigint[], %s::text[]) AS v(b, k)""", [floor_round.pk, bet_ids, keys])

    s = clock.seconds
    ratio = s["bulk"] / s["floor"]
    report(f"boundless bets on {connection.vendor}, synchronous_commit={durability()} "
           f"({N_PLAYERS:,} players, one round)", [
        (f"(a) place_bet one by one ({N_SINGLE:,} bets)", N_SINGLE / s["one_by_one"], "bets/s"),
        (f"(b) place_bets bulk ({N_PLAYERS:,} bets, one call)", N_PLAYERS / s["bulk"], "bets/s"),
        ("floor: hand-written SQL, one transaction", N_PLAYERS / s["floor"], "bets/s"),
        ("bulk / floor time ratio", ratio, "x (promise: <= 3)"),
    ])
    return 0 if ratio <= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
