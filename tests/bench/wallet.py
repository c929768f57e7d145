"""``make bench-wallet``: boundless rounds of seamless players against the reference operator wallet
(``python -m operator_wallet``, its own process, no faults), settled by real workers on PostgreSQL.

Per round: the bet batches' stake debits (per ``place_bets`` call, its first debit sent to its
last answered: debits per second; beside it the bets placed per second end to end, the game
server's view, validation and the ledger included), the round's credits (first credit call sent to the last
acknowledged: credits per second) and how long after its record the round was fully credited;
after each round the resident memory of the worker processes. Beside them, in the same run, the
floor: a plain HTTP client (aiohttp, the platform's own) sending the same number of signed debits,
then credits, to the same wallet at the same concurrency (``WALLET_CONCURRENCY``), measured
before the first round and after the last.

Promises (exit status 1 when broken, never on a timing): debits and credits each at >= 50% of the
floor's rate; the workers' memory after the last round within 10% of after the second. Also
printed: whether every round was fully credited within 10 s of its record.

Movements a run stopped earlier left pending are delivered before the floor and the first round
(said, not measured).

Sizes: ``BENCH_WALLET_PLAYERS`` (20000), ``BENCH_WALLET_ROUNDS`` (10), ``BENCH_WALLET_BATCH``
(bets per ``place_bets`` call, 5000), ``BENCH_WORKERS`` (2), or ``--players`` etc.; a smoke run
(``BENCH_SMOKE=1``) plays 2 rounds of 30 players in batches of 10."""

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import aiohttp

from tests.bench.common import open_sessions, report, setup, sized, verdict

OPERATOR = "bench-seamless"
STAKE = Decimal("5.00")


def _args():
    env = os.environ.get
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=int(env("BENCH_WALLET_PLAYERS", sized(20_000, 30))))
    parser.add_argument("--rounds", type=int, default=int(env("BENCH_WALLET_ROUNDS", sized(10, 2))))
    parser.add_argument("--batch", type=int, default=int(env("BENCH_WALLET_BATCH", sized(5_000, 10))))
    parser.add_argument("--workers", type=int, default=int(env("BENCH_WORKERS", 2)))
    return parser.parse_args()


def _players(operator, n, currency):
    """``n`` players of the seamless ``operator`` (``ws-<i>``) with journal wallets in ``currency``,
    created in bulk when missing; returns their game codes."""
    from django.contrib.auth import get_user_model

    from accounts.models import Account, Player

    codes = [f"ws-{i:05d}" for i in range(n)]
    have = set(Player.objects.filter(operator=operator, code__in=codes).values_list("code", flat=True))
    missing = [c for c in codes if c not in have]
    users = get_user_model().objects.bulk_create([get_user_model()(username=f"player:{operator.game_code(c)}")
                                                  for c in missing])
    players = Player.objects.bulk_create([Player(user=u, operator=operator, code=c, game_code=operator.game_code(c))
                                          for u, c in zip(users, missing)])
    Account.objects.bulk_create([Account(kind=Account.Kind.WALLET, operator=operator, player=p, currency=currency,
                                         journal=True) for p in players])
    open_sessions(Player.objects.filter(operator=operator, code__in=codes).values_list("pk", flat=True), currency)
    return [operator.game_code(c) for c in codes]


def _decide(view, legal):
    """Hit below 17, else stand: no extra stake, so each player's money moves once each way."""
    from tables.engine import score

    return "hit" if score(view.cards) < 17 and "hit" in legal else "stand"


def _debit_seconds(round_, windows):
    """Seconds the stake debits of ``round_`` were in flight: per ``place_bets`` call (``windows``:
    its ``(start, end)`` datetimes), the first debit sent to the last answered, summed."""
    from django.db.models import Max, Min

    from wallets.models import WalletCall

    calls = WalletCall.objects.filter(movement__round_ref=str(round_.pk), movement__kind="stake")
    total = 0.0
    for start, end in windows:
        span = calls.filter(sent_at__gte=start, sent_at__lte=end).aggregate(first=Min("sent_at"), last=Max("sent_at"),
                                                                          longest=Max("duration_ms"))
        if span["first"] is not None:
            total += (span["last"] - span["first"]).total_seconds() + span["longest"] / 1000
    return total


def _play_round(table, shoe, number, codes, batch):
    """Open, bet (timed), close, deal and record one boundless round; returns ``(round, seconds
    placing, seconds of debits in flight, bets accepted)``."""
    from delivery.simulator.decisions import InitialDeal
    from settlement.results import record_result
    from tables.cards import scan_events
    from tables.engine.play import RoundPlay
    from tables.services import open_round, report_play
    from wagering.closing import close_betting
    from wagering.models import Bet
    from wagering.placement import place_bets

    sequence, burn, shoe_round = shoe.begin_round()
    round_ = open_round(table_code=table.code, external_id=f"W{uuid.uuid4().hex[:12]}", shoe=sequence,
                        burn_count=burn, actor="bench")
    bets = [{"key": f"{round_.external_id}:b{i}", "player": code, "type": "main", "stake": f"{STAKE}"}
            for i, code in enumerate(codes)]
    from django.utils import timezone

    started, accepted, windows = time.perf_counter(), 0, []
    for i in range(0, len(bets), batch):
        opened = timezone.now()
        accepted += sum(o.error is None for o in place_bets(round_id=round_.pk, bets=bets[i:i + batch], actor="bench"))
        windows.append((opened, timezone.now()))
    placing = time.perf_counter() - started
    close_betting(round_id=round_.pk, actor="bench")
    placed = [{"id": b.record_id, "player": b.player.game_code, "type": "main", "stake": f"{b.stake:.2f}",
               "insurance": False} for b in Bet.objects.filter(round=round_).select_related("player").order_by("pk")]
    deal = InitialDeal(shoe, 4, 1, lambda up: None)
    record = RoundPlay(table.rules(), deal, placed, decide=_decide, can_afford=lambda view, action: False,
                       round_id=round_.external_id, currency=table.currency_id, shoe_round=round_.shoe_round).play()
    deal.close()
    report_play(round_id=round_.pk, events=scan_events(record), actor="bench")  # the cards as the scanner saw them
    record_result(round_id=round_.pk, record=record, cut_card_out=shoe.end_round(round_.pk), actor="bench")
    return round_, placing, _debit_seconds(round_, windows), accepted


def _credited(round_, expected, timeout=300):
    """Wait until the ``expected`` credits of ``round_`` are acknowledged; returns ``(credits per
    second from the first credit call to the last acknowledgement, seconds from the record to the
    last acknowledgement)``."""
    from django.db.models import Max, Min

    from tables.models import Round
    from wallets.models import WalletCall, WalletMovement

    credits = WalletMovement.objects.filter(round_ref=str(round_.pk), call=WalletMovement.Call.CREDIT)
    deadline = time.monotonic() + timeout
    while credits.filter(state=WalletMovement.State.OK).count() < expected:
        if time.monotonic() > deadline:
            raise RuntimeError(f"round {round_.pk}: credits not acknowledged in {timeout} s")
        time.sleep(0.05)
    last = credits.aggregate(at=Max("acknowledged_at"))["at"]
    first = WalletCall.objects.filter(movement__in=credits).aggregate(at=Min("sent_at"))["at"]
    resulted = Round.objects.get(pk=round_.pk).resulted_at
    return expected / (last - first).total_seconds(), (last - resulted).total_seconds()


def _rss_mb(workers):
    """Resident memory (MiB) of the worker processes and their pool children."""
    total = 0
    for worker in workers:
        pids = [worker.proc.pid] + [int(p) for p in
                                    Path(f"/proc/{worker.proc.pid}/task/{worker.proc.pid}/children").read_text().split()]
        for pid in pids:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total / 1024


def _floor(url, secret, codes, concurrency, call):
    """A plain aiohttp client (the platform's own HTTP client) sending one signed ``call`` (debit or
    credit) per player code to the wallet at ``url``, ``concurrency`` at once over kept-alive
    connections; returns calls/s."""
    from wallets.client import sign

    def body(code):
        return json.dumps({"transaction_id": f"floor:{uuid.uuid4().hex}", "player": code, "currency": "EUR",
                           "amount": f"{STAKE}", "round": "floor", "table": "floor",
                           "kind": "stake" if call == "debit" else "payout", "bets": [],
                           "request_id": str(uuid.uuid4()), "sent_at": datetime.now(UTC).isoformat()}).encode()

    async def run():
        limit = asyncio.Semaphore(concurrency)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
            async def one(code):
                async with limit:
                    content = body(code)
                    async with session.post(f"{url}/{call}", data=content, headers={
                            "Content-Type": "application/json", "X-Signature": sign(content, secret)}) as answer:
                        assert answer.status == 200 and (await answer.json())["status"] == "OK", await answer.text()
            started = time.perf_counter()
            await asyncio.gather(*(one(c) for c in codes))
            return len(codes) / (time.perf_counter() - started)
    return asyncio.run(run())


def main():
    args = _args()
    setup()
    from django.conf import settings

    from accounts.models import Currency, Operator
    from accounts.operators import create_operator
    from delivery.simulator.demo import ensure_tables
    from delivery.simulator.shoes import TableShoe
    from settlement.voids import cancel
    from tables.models import Round, Shoe
    from tests.operator_wallet.sandbox import SECRET, Sandbox
    from tests.workers import Worker, purge_queues
    from wallets import outbox

    log_dir = tempfile.mkdtemp(prefix="bench-wallet-")
    sandbox = Sandbox("--initial-balance", "1000000.00", log_dir=log_dir)
    table = ensure_tables(("boundless",), ("EUR",))[0]
    for left in Round.objects.filter(table=table, state__in=Round.IN_PLAY, cancelled_at__isnull=True):
        cancel(round_id=left.pk, reason="bench-wallet restarted: round left in play", actor="bench")
    operator = Operator.objects.filter(code=OPERATOR).first() or create_operator(
        code=OPERATOR, wallet_mode=Operator.WalletMode.SEAMLESS, currencies=["EUR"], wallet_url=sandbox.url,
        wallet_secret=SECRET)[0]
    Operator.objects.filter(pk=operator.pk).update(wallet_url=sandbox.url, wallet_secret=SECRET)
    codes = _players(operator, args.players, Currency.objects.get(code="EUR"))
    left = outbox.deliver()  # a run stopped earlier left movements pending: not this run's to measure
    if left.acknowledged or left.retried:
        print(f"delivered {left.acknowledged:,} movements a run before left pending ({left.retried:,} retried)")
    plain_codes = [c.split(":", 1)[1] for c in codes]
    concurrency = settings.WALLET_CONCURRENCY
    purge_queues()
    workers = [Worker(f"wallet{i}", log_dir=log_dir) for i in range(1, args.workers + 1)]
    last_shoe = Shoe.objects.filter(table=table).order_by("-sequence").values_list("sequence", flat=True).first()
    shoe = TableShoe(random.Random(3), table.penetration, (last_shoe or 0) + 1)
    memory, placing_rates, debit_rates, credit_rates, within = [], [], [], [], []
    try:
        floors = [(_floor(sandbox.url, SECRET, plain_codes, concurrency, "debit"),
                   _floor(sandbox.url, SECRET, plain_codes, concurrency, "credit"))]
        for number in range(1, args.rounds + 1):
            round_, placing, in_flight, accepted = _play_round(table, shoe, number, codes, args.batch)
            assert accepted == len(codes), f"round {round_.pk}: {accepted} of {len(codes)} bets accepted"
            credit_rate, after_record = _credited(round_, accepted)
            placing_rates.append(accepted / placing)
            debit_rates.append(accepted / in_flight)
            credit_rates.append(credit_rate)
            within.append(after_record)
            memory.append(_rss_mb(workers))
            print(f"round {number}: {accepted / in_flight:,.0f} debits/s ({accepted / placing:,.0f} bets placed/s), "
                  f"{credit_rate:,.0f} credits/s, fully credited "
                  f"{after_record:.2f} s after its record, workers {memory[-1]:,.0f} MiB", flush=True)
        floors.append((_floor(sandbox.url, SECRET, plain_codes, concurrency, "debit"),
                       _floor(sandbox.url, SECRET, plain_codes, concurrency, "credit")))
    finally:
        for worker in workers:
            worker.stop()
        sandbox.stop()
    floor_debits = statistics.mean(d for d, _ in floors)
    floor_credits = statistics.mean(c for _, c in floors)
    debits, credits = statistics.median(debit_rates), statistics.median(credit_rates)
    growth = memory[-1] / memory[min(1, len(memory) - 1)]
    rows = [("players per round", len(codes), "seamless players"),
            ("bets placed (place_bets end to end, debits included), median", statistics.median(placing_rates),
             "bets/s"),
            ("stake debits (each batch's first sent -> last answered), median", debits, "debits/s"),
            ("  floor: plain aiohttp client, same calls and concurrency", floor_debits, "debits/s"),
            ("  ratio to the floor (promise >= 0.50)", debits / floor_debits, ""),
            ("credits (first call sent -> last acknowledged), median", credits, "credits/s"),
            ("  floor: plain aiohttp client, same calls and concurrency", floor_credits, "credits/s"),
            ("  ratio to the floor (promise >= 0.50)", credits / floor_credits, ""),
            ("record -> fully credited, slowest round", max(within), "s"),
            ("  every round within 10 s", float(max(within) <= 10), "(1 = yes)"),
            ("workers' memory after round 2", memory[min(1, len(memory) - 1)], "MiB"),
            ("workers' memory after the last round", memory[-1], "MiB"),
            ("  growth (promise <= 1.10)", growth, "x")]
    report(f"seamless wallet: {args.rounds} boundless rounds, {args.workers} workers, concurrency {concurrency} "
           f"(logs: {log_dir})", rows)
    return verdict(debits / floor_debits >= 0.5 and credits / floor_credits >= 0.5 and growth <= 1.10)


if __name__ == "__main__":
    sys.exit(main())
