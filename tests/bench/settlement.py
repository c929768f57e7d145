"""``make bench-settlement``: rounds settled through the real ``settlement.settle_round`` task by a real
worker process on PostgreSQL.

Builds a boundless round with PLAYERS players (a main bet and two side bets each: 3 x PLAYERS bets)
and a premium round with 7 seats and 200 bets behind, stakes debited through the ledger, their
records taken by ``record_result`` as the game server's are (its time is printed too); then sends
each round's task to one subprocess worker (``-P solo`` on its own queue, so the task runs in the
process whose peak memory, /proc VmHWM, is read) and times it from send to SETTLED, once the
set-up's writes are vacuumed and analyzed (``common.quiesce``, as autovacuum would soon after a
bulk load). Beside it, the
floor: the same bet updates, bet details and ledger rows (transactions linked into their wallets'
hash chains, entries with the wallets' balance_after, wallet balances and chain heads) written by
one hand-written SQL transaction,
with the commit's deferred foreign-key checks, on an identical copy of the boundless round. Also
prints the share of the two settlements' bet and wallet updates PostgreSQL made in place (HOT
updates, ``wagering`` migration 0003, ``accounts`` migration 0014), and the rollups' share of the
settle: ``wagering.rollups.round_settled`` with its grouping of the bets (``Plan.counted``) timed
again on the settled round in a rolled-back transaction, and the settle / floor ratio without
it (the settlement's writes to the rollups are the ones the floor does not make), and what a
per-player-per-day rollup, not kept, would add (docs/reports.md). Exits 1 if the settle path is
more than 1.6x the floor, or if the rollups worsen its ratio to the floor by more than 5%."""

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from decimal import Decimal
from pathlib import Path
from unittest import mock

from tests.bench.common import Clock, funded_wallets, quiesce, report, setup, sized, verdict

PLAYERS = int(os.environ.get("BENCH_PLAYERS", sized(20_000, 250)))
BEHIND = 200
SIDE_BETS = ["pairs", "bust_bonus", "lucky_trio", "poker_trio"]
ROOT = Path(__file__).resolve().parents[2]


def _stake_everything(round_, bets, wallets, house):
    from accounts.services import Posting, post
    post([Posting(f"stake:{b.pk}", "stake", wallets[b.player_id], house, b.stake) for b in bets])


def _take(round_, record):
    """Take ``record`` for the CLOSED ``round_`` as the game server does (``record_result``), its
    settle task not queued (the benchmark sends it to its own worker); returns the seconds taken."""
    from settlement.results import record_result
    from settlement.tasks import settle_round
    from tables.cards import scan_events
    from tables.services import report_play

    report_play(round_id=round_.pk, events=scan_events(record), actor="bench")  # dealt: its cards scanned
    start = time.perf_counter()
    with mock.patch.object(settle_round, "delay"):
        record_result(round_id=round_.pk, record=record)
    return time.perf_counter() - start


def _boundless(table, players, wallets, house, name, taken=None):
    """A RESULTED boundless round: per player a main bet (hit / stand / surrender / auto-play) and
    two side bets, placed then accepted by ``close_betting`` (so the bets' rows carry the old
    versions a real round's have). Dealer 7D TC (17); shared player cards TH 6C 5S. Its record is
    taken by ``record_result`` (``_take``, the seconds added to ``taken[name]``), or, without
    ``taken``, stored as it is (the floor's copy). Returns the round."""
    from tables.models import Round
    from tables.services import open_round
    from wagering.closing import close_betting
    from wagering.models import Bet

    rng = random.Random(7)
    round_ = open_round(table_code=table.code, external_id=name, shoe=1, burn_count=2)
    bets, items = [], []
    for i, p in enumerate(players):
        actions = rng.choice([["hit"], ["stand"], ["surrender"], []])
        for j, bet_type in enumerate(["main"] + rng.sample(SIDE_BETS, 2)):
            rid = f"{i}-{j}"
            bets.append(Bet(round=round_, player=p, type=bet_type, stake=Decimal("2.00"), state="placed",
                            idempotency_key=f"{name}:{rid}", record_id=rid))
            item = {"id": rid, "player": p.code, "type": bet_type, "stake": "2.00"}
            if bet_type == "main":
                item["actions"] = actions
            items.append(item)
    bets = Bet.objects.bulk_create(bets, batch_size=5000)
    _stake_everything(round_, bets, wallets, house)
    close_betting(round_id=round_.pk)
    record = {"format": "round-record/1", "variant": "boundless", "round": name, "shoe_round": round_.shoe_round,
              "currency": "EUR", "dealer": ["7D", "TC"], "player_cards": ["TH", "6C", "5S"], "bets": items}
    if taken is None:
        Round.objects.filter(pk=round_.pk).update(state="resulted", record=record, resulted_at=round_.opened_at)
    else:
        taken[name] = _take(round_, record)
    return Round.objects.get(pk=round_.pk)


def _premium(table, players, wallets, house, name):
    """A RESULTED premium round: 7 seated hands that stand, 200 bets behind spread over the seats,
    its record taken by ``record_result``."""
    from tables.models import Round
    from tables.services import open_round
    from wagering.models import Bet

    round_ = open_round(table_code=table.code, external_id=name, shoe=1, burn_count=2)
    hands = [["TH", "7C"], ["AS", "KD"], ["9H", "9C"], ["TS", "QD"], ["5H", "6C"], ["8S", "8H"], ["2D", "3S"]]
    seats = {str(n): {"cards": cards, "actions": ["stand"]} for n, cards in enumerate(hands, 1)}
    seats["2"]["actions"] = []  # a blackjack stands by itself
    seats["5"]["actions"], seats["5"]["cards"] = ["hit"], ["5H", "6C", "JH"]
    seats["7"]["actions"], seats["7"]["cards"] = ["hit", "hit"], ["2D", "3S", "4C", "QS"]
    bets, items = [], []
    for n in range(1, 8):
        p = players[n - 1]
        bets.append(Bet(round=round_, player=p, type="main", seat=n, stake=Decimal("10.00"), state="accepted",
                        idempotency_key=f"{name}:s{n}", record_id=f"s{n}"))
        items.append({"id": f"s{n}", "player": p.code, "type": "main", "seat": n, "stake": "10.00"})
    for i in range(BEHIND):
        p, n = players[7 + i], i % 7 + 1
        bets.append(Bet(round=round_, player=p, type="behind", seat=n, stake=Decimal("5.00"), state="accepted",
                        idempotency_key=f"{name}:b{i}", record_id=f"b{i}"))
        items.append({"id": f"b{i}", "player": p.code, "type": "behind", "seat": n, "stake": "5.00"})
    bets = Bet.objects.bulk_create(bets)
    _stake_everything(round_, bets, wallets, house)
    record = {"format": "round-record/1", "variant": "premium", "round": name, "shoe_round": round_.shoe_round,
              "currency": "EUR", "dealer": ["9S", "8D"], "seats": seats, "bets": items}
    Round.objects.filter(pk=round_.pk).update(state="closed", closed_at=round_.opened_at)
    _take(round_, record)
    return Round.objects.get(pk=round_.pk)


def _worker(queue, log_path):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    log = open(log_path, "w")
    proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "solo", "-Q", queue,
                             "-l", "info", "-n", f"{queue}@%h", "--without-gossip", "--without-mingle",
                             "--without-heartbeat"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while "ready." not in Path(log_path).read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(Path(log_path).read_text()[-3000:])
        time.sleep(0.2)
    return proc


def _peak_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _updates(since=(0, 0, 0, 0), expected=0):
    """``(bet updates, HOT bet updates, wallet updates, HOT wallet updates)`` since ``since`` (an
    earlier result), as PostgreSQL's statistics count them: a backend reports its counts some
    time after its commit (at once when idle, within seconds when it reported less than a second
    ago), so they are read again until they hold ``expected`` bet updates, for at most 20 seconds."""
    from django.db import connection

    deadline = time.monotonic() + 20
    while True:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute("SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables "
                           "WHERE relname IN ('wagering_bet', 'accounts_account')")
            stats = {name: (updates, hot) for name, updates, hot in cursor.fetchall()}
            now = (*stats.get("wagering_bet", (0, 0)), *stats.get("accounts_account", (0, 0)))
            counts = tuple(n - before for n, before in zip(now, since))
        if counts[0] >= expected or time.monotonic() > deadline:
            return counts
        time.sleep(0.5)


def _settle_via_worker(round_, queue):
    from settlement.tasks import settle_round
    from tables.models import Round

    settle_round.apply_async((round_.pk,), queue=queue)
    # The state alone: loading the round would decode its whole record (~0.3 s of a boundless one).
    while (state := Round.objects.filter(pk=round_.pk).values_list("state", flat=True).get()) == Round.State.RESULTED:
        time.sleep(0.02)
    assert state == Round.State.SETTLED, state


def _floor(round_, wallets, house):
    """The same writes as settling ``round_`` by hand-written SQL in one transaction, numbers sent
    as array literals and texts in binary, wallets reached by index as settle reaches them
    (``accounts.sql``, ``BY_KEY``; results and their details computed by
    the engine and ``settlement.details`` beforehand, not timed): the round's distinct details,
    bets pointing at them, payout transactions linked into their wallets' hash chains
    (``accounts.chain``: ``prev_hash`` and ``chain_hash`` computed here from the heads read under
    the lock, their contents through ``Contents`` as a bulk post's), entries with the wallets'
    ``balance_after`` (read under the lock), wallet balances and chain heads (the ledger's INSERTs
    checking their references as every INSERT does,
    ``accounts`` migration 0013), then the deferred foreign-key checks a commit runs (``SET
    CONSTRAINTS ALL IMMEDIATE``) before the rollback. Returns seconds."""
    from django.db import transaction
    from django.utils import timezone

    from accounts import chain
    from accounts.sql import BY_KEY, execute_binary, number_array
    from settlement.details import distinct_details
    from tables.engine import settle
    from wagering.models import Bet

    table = round_.table
    result = settle(round_.record, rules=table.rules(), minor_units=2)
    bets = dict(Bet.objects.filter(round=round_).values_list("record_id", "pk"))
    players = dict(Bet.objects.filter(round=round_).values_list("pk", "player_id"))
    rows = [(bets[rid], r.outcome, r.returned) for rid, r in result.bets.items()]
    details, index = distinct_details(result.bets.values())
    texts = [json.dumps(d) for d in details]
    paid = [(pk, ret) for pk, _, ret in rows if ret]
    dest = [wallets[players[pk]].pk for pk, _ in paid]
    amounts = [ret for _, ret in paid]
    keys = [f"floor-payout:{pk}" for pk, _ in paid]
    start = time.perf_counter()
    with transaction.atomic():
        now = timezone.now()
        locked = execute_binary("SELECT id, balance, chain_head FROM accounts_account WHERE id = ANY(%b::bigint[]) "
                                "ORDER BY id FOR UPDATE", [sorted(set(dest))], planner=BY_KEY)
        balances = {pk: balance for pk, balance, _ in locked}
        heads = {pk: chain.as_bytes(head) for pk, _, head in locked}
        after, links, contents = [], [], chain.Contents(now)
        for key, w, x in zip(keys, dest, amounts):
            balances[w] += x
            after.append(balances[w])
            prev = heads[w]
            heads[w] = chain.link(prev, contents(key, "payout", "EUR", "", [(house.pk, -x, None), (w, x, balances[w])]))
            links.append((prev, heads[w]))
        detail_ids = [row[0] for row in execute_binary(
            """INSERT INTO settlement_settlementdetail (round_id, correction, detail, settled_at)
               SELECT %b, 0, t::jsonb, now() FROM unnest(%b::text[]) WITH ORDINALITY AS x(t, n) ORDER BY n
               RETURNING id""", [round_.pk, texts])]
        execute_binary(
            """UPDATE wagering_bet AS b SET state = 'settled', outcome = u.o, returned = u.r, settled_at = now(),
                          settlement_id = u.s
                          FROM unnest(%s::bigint[], %b::text[], %s::numeric[], %s::bigint[]) AS u(id, o, r, s)
                          WHERE b.round_id = %b AND b.id = u.id""",
            [number_array(r[0] for r in rows), [r[1] for r in rows], number_array(r[2] for r in rows),
             number_array(detail_ids[n] for n in index), round_.pk])
        txn_ids = [row[0] for row in execute_binary(
            """INSERT INTO accounts_ledgertransaction (key, kind, currency_id, memo, created_at, prev_hash, chain_hash)
               SELECT k, 'payout', 'EUR', '', %b, p, h FROM unnest(%b::text[], %b::bytea[], %b::bytea[])
               WITH ORDINALITY AS u(k, p, h, n) ORDER BY n RETURNING id""",
            [now, keys, [p for p, _ in links], [h for _, h in links]])]
        execute_binary("""INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after)
                          SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::numeric[], %s::numeric[])""",
                       [number_array(txn_ids * 2), number_array([house.pk] * len(paid) + dest),
                        number_array([-a for a in amounts] + amounts), number_array([None] * len(paid) + after)])
        execute_binary("UPDATE accounts_account AS a SET balance = u.b, chain_head = u.h "
                       "FROM unnest(%s::bigint[], %s::numeric[], %b::bytea[]) "
                       "AS u(id, b, h) WHERE a.id = u.id AND a.id = ANY(%s::bigint[])",
                       [number_array(balances), number_array(balances.values()), [heads[pk] for pk in balances],
                        number_array(balances)], planner=BY_KEY)
        execute_binary("SET CONSTRAINTS ALL IMMEDIATE", [])  # what COMMIT would check
        transaction.set_rollback(True)  # the floor's rows are not kept (the round stays RESULTED)
    return time.perf_counter() - start


def _rollups_cost(round_):
    """Seconds the rollups take of settling ``round_`` (settled): what ``_settle_locked`` does for
    them (its plan's bets grouped by operator and kind, ``Plan.counted``, then
    ``wagering.rollups.round_settled``) run again on it in a transaction rolled back (its rows are
    there: updated, as a settlement of a table's day after the first updates them). Its plan, its
    wallets and its bets' placing times, which settling has at hand, are read before, not timed."""
    from django.db import transaction
    from django.db.models import Max, Min

    from settlement import plans
    from tables.money import round_money
    from wagering import rollups
    from wagering.records import check_record

    plan = plans.plan_of(*check_record(round_, round_.record))
    wallets, _ = round_money(round_, plan.bets_of().keys())
    span = round_.bets.aggregate(first=Min("placed_at"), last=Max("placed_at"))
    with transaction.atomic():
        start = time.perf_counter()
        rollups.round_settled(round_, plan.counted({pk: w.operator_id for pk, w in wallets.items()}),
                              (span["first"], span["last"]))
        seconds = time.perf_counter() - start
        transaction.set_rollback(True)
    return seconds


def _player_rollup_cost(round_):
    """Seconds that keeping a per-player-per-day rollup would add to settling ``round_`` (settled):
    its bets grouped per day (of the operator's zone), player and table and upserted into such a
    table (a temporary one, in a transaction rolled back), as one statement. Not kept
    (docs/reports.md, "What the rollups do not keep"): measured here to show why."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("""CREATE TEMP TABLE bench_player_day (day date, operator_id bigint, player_id bigint,
                          table_id bigint, bets bigint, staked numeric(20, 4), returned numeric(20, 4),
                          PRIMARY KEY (operator_id, day, player_id, table_id)) ON COMMIT DROP""")
        cursor.execute("SET LOCAL jit = off")
        start = time.perf_counter()
        cursor.execute("""INSERT INTO bench_player_day
                          SELECT (b.placed_at AT TIME ZONE o.time_zone)::date, p.operator_id, b.player_id, b.table_id,
                                 count(*), sum(b.stake), sum(b.returned)
                          FROM wagering_bet b JOIN accounts_player p ON p.id = b.player_id
                          JOIN accounts_operator o ON o.id = p.operator_id
                          WHERE b.round_id = %s AND b.state = 'settled' GROUP BY 1, 2, 3, 4
                          ON CONFLICT (operator_id, day, player_id, table_id) DO UPDATE
                          SET bets = bench_player_day.bets + excluded.bets,
                              staked = bench_player_day.staked + excluded.staked,
                              returned = bench_player_day.returned + excluded.returned""", [round_.pk])
        seconds = time.perf_counter() - start
        transaction.set_rollback(True)
    return seconds


def main():
    setup()
    from django.db import connection

    from accounts import services as ledger
    from accounts.models import Account, Currency, LedgerEntry, LedgerTransaction
    from tables.models import Round, Table, TableLimit
    from wagering.models import Bet

    run = uuid.uuid4().hex[:8]
    eur, _ = Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})
    tables = {v: Table.objects.create(code=f"bs-{v[:3]}-{run}", name=v, variant=v, currency=eur,
                                      seats=7 if v == "premium" else None) for v in ("boundless", "premium")}
    for t in tables.values():
        TableLimit.objects.bulk_create([TableLimit(table=t, bet_type=bt, min_stake=1, max_stake=1000, chip_step=1)
                                        for bt in t.rules().bet_types])
    players, accounts = funded_wallets(f"bs-{run}", PLAYERS, eur)
    wallets = {a.player_id: a for a in accounts}
    houses = {v: ledger.house_account(name=t.house_name, currency=eur, operator=ledger.default_operator())
              for v, t in tables.items()}

    taken = {}
    boundless = _boundless(tables["boundless"], players, wallets, houses["boundless"], f"B-{run}", taken)
    floor_copy = _boundless(tables["boundless"], players, wallets, houses["boundless"], f"F-{run}")
    premium = _premium(tables["premium"], players, wallets, houses["premium"], f"P-{run}")
    n_boundless, n_premium = boundless.bets.count(), premium.bets.count()
    quiesce(Account, Bet, LedgerTransaction, LedgerEntry, Round)
    connection.close()

    queue = f"bench-settlement-{run}"
    log_path = f"/tmp/{queue}.log"
    worker = _worker(queue, log_path)
    clock = Clock()
    try:
        base_kib = _peak_kib(worker.pid)
        updates_before = _updates()
        with clock.time("premium"):
            _settle_via_worker(premium, queue)
        with clock.time("boundless"):
            _settle_via_worker(boundless, queue)
        peak_kib = _peak_kib(worker.pid)
        updated, in_place, wallets_updated, wallets_in_place = _updates(updates_before, n_boundless + n_premium)
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(30)
    clock.seconds["floor"] = _floor(floor_copy, wallets, houses["boundless"])

    s = {**clock.seconds, "rollups": _rollups_cost(boundless), "player rollup": _player_rollup_cost(boundless)}
    ratio = s["boundless"] / s["floor"]
    without = (s["boundless"] - s["rollups"]) / s["floor"]
    report(f"settlement through the real task and worker on {connection.vendor} "
           f"(boundless {PLAYERS:,} players, {n_boundless:,} bets; premium 7 seats + {BEHIND} behind)", [
        ("boundless round: bets settled per second", n_boundless / s["boundless"], "bets/s"),
        ("boundless round: send to SETTLED", s["boundless"], "s"),
        ("  before: its record taken (record_result, in this process)", taken[f"B-{run}"], "s"),
        ("premium round: send to SETTLED", s["premium"] * 1000, "ms"),
        ("floor: same writes by hand-written SQL", n_boundless / s["floor"], "bets/s"),
        ("settle / floor time ratio", ratio, "x (promise: <= 1.6)"),
        ("rollups: counting the boundless round (round_settled)", s["rollups"] * 1000,
         f"ms ({100 * s['rollups'] / s['boundless']:.1f}% of the settle)"),
        ("settle / floor time ratio without the rollups' share", without,
         f"x (with them: +{100 * (ratio / without - 1):.1f}%, promise: <= 5%)"),
        ("both rounds: bet rows rewritten in place (HOT)", 100 * in_place / max(updated, 1),
         f"% of {updated:,} bet updates"),
        ("both rounds: wallet rows rewritten in place (HOT)", 100 * wallets_in_place / max(wallets_updated, 1),
         f"% of {wallets_updated:,} wallet updates"),
        ("worker peak memory (VmHWM)", peak_kib / 1024, "MiB"),
        ("worker memory at start", base_kib / 1024, "MiB"),
        ("not kept: a per-player-per-day rollup of the boundless round", s["player rollup"] * 1000,
         f"ms (+{100 * s['player rollup'] / s['boundless']:.1f}% of the settle)"),
    ])
    return verdict(ratio <= 1.6 and ratio / without <= 1.05)


if __name__ == "__main__":
    sys.exit(main())
