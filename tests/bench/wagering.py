"""``make bench-wagering``: bets placed per second through the service layer on PostgreSQL, for one
boundless round with 20,000 players.

(a) ``wagering.services.place_bet`` one by one (one database transaction per bet, as single game
server requests arrive), on N_SINGLE players; (b) ``wagering.services.place_bets`` with all 20,000
bets in one call (the bulk path the game server uses: one ledger ``post`` with 20,000 postings).
Beside them, the floor: the same rows (bets, ledger transactions, two entries each, wallet
balances, ``bet_placed`` events) written by hand-written SQL in one transaction, parameters sent in
binary. Bulk and floor run REPEAT times each, interleaved, each time on a round of its own for the
same players. Prints the numbers (the best run of each) and the bulk / floor ratio; exits 1 if the
bulk path is more than 3x the floor.

``--phases``: also the wall-clock seconds of each run's phases (``PHASES``: the bulk path's
statements, the ledger post, the commit; the rest is Python: request checks, model instances).
``--profile``: then one more bulk run (not counted) under cProfile, its top functions printed."""

import cProfile
import importlib
import pstats
import sys
import time
import uuid
from contextlib import contextmanager, nullcontext
from decimal import Decimal

from tests.bench.common import Clock, durability, funded_wallets, report, setup, sized, verdict

N_PLAYERS = sized(20_000, 200)
N_SINGLE = sized(2_000, 20)
#: Bulk and floor runs, interleaved; the best of each is compared (the machine may be shared).
REPEAT = sized(3, 1)
#: What ``--phases`` times: (module, attribute, label).
PHASES = [("wagering.pg", "lock_wallets", "lock wallets"), ("wagering.pg", "known_bets", "known keys"),
          ("wagering.pg", "insert_bets", "bets + events"), ("wagering.services", "post", "ledger post"),
          ("django.db.backends.base.base", "BaseDatabaseWrapper.commit", "commit")]


@contextmanager
def _timed_phases(seconds):
    """While inside, add the wall-clock seconds spent in each of ``PHASES`` to ``seconds`` (a dict
    by label): the attributes are wrapped, and restored on leaving. ``seconds["cpu"]``: this
    process's CPU seconds inside (the Python side; the rest of the wall clock is the server's or
    waiting for a core)."""
    wrapped, cpu = [], time.process_time()
    for module, attribute, label in PHASES:
        owner = importlib.import_module(module)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, name)

        def timed(*args, _original=original, _label=label, **kwargs):
            start = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                seconds[_label] = seconds.get(_label, 0) + time.perf_counter() - start

        setattr(owner, name, timed)
        wrapped.append((owner, name, original))
    try:
        yield
    finally:
        for owner, name, original in wrapped:
            setattr(owner, name, original)
        seconds["cpu"] = time.process_time() - cpu


def _phases_line(total, seconds):
    """``total`` seconds split by ``seconds`` (``_timed_phases``), the rest last, then the CPU seconds."""
    phases = {label: t for label, t in seconds.items() if label != "cpu"}
    rest = total - sum(phases.values())
    return (" + ".join([f"{label} {t:.2f}" for label, t in phases.items()] + [f"rest {rest:.2f}"])
            + f"  (client CPU {seconds['cpu']:.2f} s)")


def _floor(round_, players, wallets, house, run):
    """The rows ``place_bets`` writes for ``players`` (one 5.00 main bet each, paid from ``wallets``
    to ``house``) on ``round_``, by hand-written SQL in one transaction, parameters sent in binary:
    the round locked, the wallets locked and their balances read, the bets, their ``stake:<bet>``
    transactions, two entries each (the wallet's with its ``balance_after``), the wallets' new
    balances, and one ``bet_placed`` event per bet with the service's payload."""
    from django.db import transaction

    from accounts.sql import execute_binary

    ids = [w.pk for w in wallets]
    keys = [f"f:{run}:{p.pk}" for p in players]
    stake = Decimal("5.00")
    n = len(ids)
    with transaction.atomic():
        execute_binary("SELECT id FROM tables_round WHERE id = %b FOR SHARE", [round_.pk])
        balances = dict(execute_binary("SELECT id, balance FROM accounts_account WHERE id = ANY(%b::bigint[]) "
                                       "ORDER BY id FOR UPDATE", [ids]))
        after = [balances[pk] - stake for pk in ids]
        bet_ids = [row[0] for row in execute_binary(
            """INSERT INTO wagering_bet (round_id, table_id, currency_id, player_id, type, stake, state,
                                         idempotency_key, record_id, follow_double, follow_split, placed_at)
               SELECT %b, %b, 'EUR', p, 'main', %b, 'placed', k, k, false, false, now()
               FROM unnest(%b::bigint[], %b::text[]) WITH ORDINALITY AS v(p, k, n) ORDER BY n RETURNING id""",
            [round_.pk, round_.table_id, stake, [p.pk for p in players], keys])]
        txn_ids = [row[0] for row in execute_binary(
            """INSERT INTO accounts_ledgertransaction (key, kind, currency_id, memo, created_at)
               SELECT 'stake:' || b, 'stake', 'EUR', '', now() FROM unnest(%b::bigint[]) WITH ORDINALITY AS v(b, n)
               ORDER BY n RETURNING id""", [bet_ids])]
        execute_binary("""INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after)
                          SELECT * FROM unnest(%b::bigint[], %b::bigint[], %b::numeric[], %b::numeric[])""",
                       [txn_ids * 2, ids + [house.pk] * n, [-stake] * n + [stake] * n, after + [None] * n])
        execute_binary("UPDATE accounts_account AS a SET balance = u.b FROM unnest(%b::bigint[], %b::numeric[]) "
                       "AS u(id, b) WHERE a.id = u.id", [ids, after])
        execute_binary("""INSERT INTO tables_roundevent (round_id, kind, actor, payload, created_at)
                          SELECT %b, 'bet_placed', '', jsonb_build_object('bet', b, 'record_id', k, 'player', c,
                                 'type', 'main', 'seat', NULL, 'stake', '5.00'), now()
                          FROM unnest(%b::bigint[], %b::text[], %b::text[]) AS v(b, k, c)""",
                       [round_.pk, bet_ids, keys, [p.code for p in players]])


def main():
    setup()
    from django.db import connection

    from accounts import services as ledger
    from accounts.models import Currency
    from tables.models import Table, TableLimit
    from tables.services import open_round
    from wagering.placement import place_bet, place_bets

    run = uuid.uuid4().hex[:8]
    eur, _ = Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})
    rounds = {}
    for name in ["single", "profiled"] + [f"{path}{i}" for i in range(REPEAT) for path in ("bulk", "floor")]:
        table = Table.objects.create(code=f"bw-{run}-{name}", name=name, variant="boundless", currency=eur)
        TableLimit.objects.create(table=table, bet_type="main", min_stake=1, max_stake=1000, chip_step=1)
        rounds[name] = open_round(table_code=table.code, external_id="R-1", shoe=1, burn_count=2)
    players, wallets = funded_wallets(f"bw-{run}", N_PLAYERS, eur)

    clock = Clock()
    with clock.time("one_by_one"):
        for p in players[:N_SINGLE]:
            place_bet(round_id=rounds["single"].pk, key=f"s:{run}:{p.pk}", player=p.code, type="main", stake="5.00")
    bulk, floor, phases = [], [], []
    for i in range(REPEAT):  # interleaved, so that the machine's load weighs on both alike
        requests = [{"key": f"b{i}:{run}:{p.pk}", "player": p.code, "type": "main", "stake": "5.00"} for p in players]
        phases.append(({}, {}))
        with clock.time("bulk"), _timed_phases(phases[i][0]) if "--phases" in sys.argv else nullcontext():
            outcomes = place_bets(round_id=rounds[f"bulk{i}"].pk, bets=requests)
        bulk.append(clock.seconds["bulk"])
        assert not [o for o in outcomes if o.error], "bulk bets rejected"
        floor_round = rounds[f"floor{i}"]
        house = ledger.house_account(name=floor_round.table.house_name, currency=eur,
                                      operator=ledger.default_operator())
        with clock.time("floor"), _timed_phases(phases[i][1]) if "--phases" in sys.argv else nullcontext():
            _floor(floor_round, players, wallets, house, f"{run}-{i}")
        floor.append(clock.seconds["floor"])

    s = clock.seconds
    ratio = min(bulk) / min(floor)
    report(f"boundless bets on {connection.vendor}, synchronous_commit={durability()} "
           f"({N_PLAYERS:,} players, one round)", [
        (f"(a) place_bet one by one ({N_SINGLE:,} bets)", N_SINGLE / s["one_by_one"], "bets/s"),
        (f"(b) place_bets bulk ({N_PLAYERS:,} bets, one call; best of {REPEAT})", N_PLAYERS / min(bulk), "bets/s"),
        (f"floor: hand-written SQL, one transaction (best of {REPEAT})", N_PLAYERS / min(floor), "bets/s"),
        ("bulk / floor time ratio (best / best)", ratio, "x (promise: <= 3)"),
    ])
    print("  each run, bulk / floor: " + ", ".join(f"{b:.2f} s / {f:.2f} s" for b, f in zip(bulk, floor)))
    if "--phases" in sys.argv:
        for i, (b, f) in enumerate(zip(bulk, floor)):
            print(f"  run {i + 1}: bulk {b:.2f} s = {_phases_line(b, phases[i][0])}")
            print(f"         floor {f:.2f} s = {_phases_line(f, phases[i][1])}")
    if "--profile" in sys.argv:
        requests = [{"key": f"p:{run}:{p.pk}", "player": p.code, "type": "main", "stake": "5.00"} for p in players]
        with cProfile.Profile() as profile:
            place_bets(round_id=rounds["profiled"].pk, bets=requests)
        print("\nOne more bulk run under cProfile (not counted; the profiler slows Python, not the server):")
        stats = pstats.Stats(profile)
        stats.sort_stats("cumulative").print_stats(r"/(wagering|accounts|tables)/", 25)
        stats.sort_stats("tottime").print_stats(15)
    return verdict(ratio <= 3)


if __name__ == "__main__":
    sys.exit(main())
