"""End to end, seamless: the simulator deals for the seamless demo operator ``east`` whose wallet is
the reference operator wallet as its own process (``python -m operator_wallet``), injecting its
faults; settlement by real workers on PostgreSQL and Redis (in-process on SQLite). Afterwards every
player's money is checked at the wallet against the bets on the platform (``assert_exactly_once``).
Also: a worker SIGKILLed while its credits are in flight, the wallet down for a while (credits
wait, Alerts raised then cleared), the broker restarted with credits queued, a wrong secret."""

import importlib
import time
from collections import defaultdict
from decimal import Decimal

import pytest
from django.apps import apps
from django.db.models import Sum

from accounts import chain
from accounts.models import LedgerTransaction, Operator
from delivery.simulator.config import SimConfig
from delivery.simulator.demo import ensure_operators
from delivery.simulator.runner import run_simulation
from settlement.jobs import watch_wallets
from settlement.models import Alert
from settlement.tasks import redrive_unsettled
from tables.models import Round
from tests.conftest import on_postgresql
from tests.operator_wallet.sandbox import SECRET, Platform, Sandbox
from tests.workers import Beat, Redis, Worker, purge_queues
from wagering.models import Bet, BetExtra
from wallets import outbox
from wallets.client import transaction_id
from wallets.models import WalletMovement
from wallets.reconcile import reconcile
from wallets.tasks import redrive

pytestmark = pytest.mark.django_db(transaction=True)
State = WalletMovement.State
#: A new player's balance at the reference wallet (its default ``--initial-balance``).
INITIAL = Decimal("1000.00")
#: Every fault of the reference wallet at a few percent; a timed-out or late call outlasts the
#: operator's timeout (``TIMEOUT_MS``), so the platform never learns its outcome.
TIMEOUT_MS = 1000
FAULTS = ["--latency-ms", "1", "--jitter-ms", "4", "--error-before-rate", "0.03", "--drop-rate", "0.03",
          "--drop-applies", "--late-debit-rate", "0.02", "--late-debit-ms", "2000", "--timeout-rate", "0.02",
          "--timeout-ms", "1800", "--error-after-rate", "0.03", "--insufficient-rate", "0.03",
          "--blocked-players", "demo-real-0004"]


def wait_for(check, timeout=120, what="condition", every=0.25, tick=None):
    """Poll ``check`` until true; ``tick()`` (when given) between polls, e.g. a beat's job."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        if tick is not None:
            tick()
        time.sleep(every)


@pytest.fixture
def wallet(tmp_path):
    """``wallet(*args) -> Platform``: a reference wallet process with ``args``, its admin client."""
    started = []

    def start(*args):
        sandbox = Sandbox(*args, "--seed", "7", log_dir=tmp_path)
        started.append(sandbox)
        return Platform(sandbox.url)
    yield start
    for sandbox in started:
        sandbox.stop()


@pytest.fixture
def simulate(request):
    """``simulate(platform, workers=True, **SimConfig fields) -> SimulationResult`` for the seamless
    operator east at ``platform``'s wallet (with 2 real workers on PostgreSQL unless ``workers`` is
    False: then nothing settles until the test starts some)."""
    def run(platform, workers=True, secret=SECRET, **config):
        east = ensure_operators(["east"], platform.url, secret)[0]
        Operator.objects.filter(pk=east.pk).update(wallet_timeout_ms=config.pop("timeout_ms", TIMEOUT_MS))
        if on_postgresql() and workers:
            request.getfixturevalue("celery_workers")("seamless", concurrency=2)
        defaults = {"players": 10, "boundless_players": 40, "currencies": ("EUR",), "settle_timeout": 180,
                    "wallet_timeout": 180, "operators": ("east",)}
        return run_simulation(SimConfig(wallet_url=platform.url, wallet_secret=secret, **{**defaults, **config}),
                              progress=False)
    return run


def retry_failed():
    """A supervisor's retry of every FAILED outbox movement (a correction the player could not cover)."""
    for pk in WalletMovement.objects.filter(outbox.OUTBOX, state=State.FAILED).values_list("pk", flat=True):
        outbox.retry(pk)
    outbox.deliver()


def player_results():
    """``{(player code, currency): returned - staked}`` of east's bets: settled bets with their
    extra stakes; refunded bets count 0; no bet may be open."""
    bets = Bet.objects.filter(player__operator__code="east")
    assert not bets.exclude(state__in=[Bet.State.SETTLED, Bet.State.REFUNDED]).exists()
    extras = dict(BetExtra.objects.filter(bet__in=bets).values("bet").annotate(s=Sum("amount")).values_list("bet", "s"))
    out = defaultdict(Decimal)
    for pk, code, currency, stake, returned in bets.filter(state=Bet.State.SETTLED).values_list(
            "pk", "player__code", "round__table__currency_id", "stake", "returned"):
        out[code, currency] += returned - stake - extras.get(pk, 0)
    return out


def assert_exactly_once(platform):
    """Every seamless movement acknowledged; each player's balance at the wallet moved by exactly
    the result of their bets; no transaction id applied twice; every stake debit the platform did
    not keep rolled back or tombstoned, and every debit the wallet kept is a placed bet's; the
    platform's view of each movement matches the wallet's books; reconcile clean."""
    assert not WalletMovement.objects.filter(state__in=[State.PENDING, State.FAILED]).exists()
    state = platform.state()
    books, tombstones = state["transactions"], state["tombstones"]
    assert state["counters"]["applied_twice"] == 0

    results = player_results()
    assert results, "no bet settled"
    for (code, currency), result in results.items():
        assert Decimal(state["players"][code]["balances"][currency]) - INITIAL == result, (code, currency)

    movements = {transaction_id(m.key): m for m in WalletMovement.objects.select_related("reference")}
    for tid, m in movements.items():
        if m.state == State.OK and m.call != WalletMovement.Call.ROLLBACK:
            assert Decimal(books[tid]["amount"]) == m.amount and books[tid]["call"] == m.call, m.key
        if m.call == WalletMovement.Call.DEBIT and m.kind != "correction" and m.ledger_key is None:
            rollback = m.rollbacks.first()  # none for a refused debit: it moved nothing
            assert (rollback is None) == (m.state == State.REFUSED), m.key
            assert rollback is None or rollback.state == State.OK, m.key
            assert tid not in books or (rollback and books[tid]["rolled_back_by"]) or tid in tombstones, m.key
    for tid, t in books.items():
        if t["call"] == "debit" and not t["rolled_back_by"]:
            assert movements[tid].ledger_key is not None, f"{tid}: the wallet kept a debit the platform did not"
    assert reconcile().ok, reconcile().breaches


def test_every_fault_of_the_wallet_moves_each_players_money_exactly_once(wallet, simulate):
    platform = wallet(*FAULTS)
    result = simulate(platform, rounds=10, seed=11, fault_rate=0.15)
    assert result.settled and result.delivered
    assert {g.table.variant for g in result.games.values()} == {"classic", "premium", "boundless"}
    retry_failed()
    assert_exactly_once(platform)

    injected = platform.state()["counters"]["faults"]
    assert {k for k, n in injected.items() if n} >= {"error_before", "drop", "late_debit", "timeout", "error_after",
                                                      "insufficient", "blocked"}
    kinds = set(WalletMovement.objects.values_list("call", "state"))
    assert {("debit", State.OK), ("debit", State.REFUSED), ("debit", State.UNKNOWN), ("rollback", State.OK),
            ("credit", State.OK)} <= kinds
    assert set(result.stats.rejected) >= {"wallet_unavailable", "insufficient_funds", "player_blocked"}
    assert WalletMovement.objects.filter(call="credit", kind="refund").exists()  # a voided round refunded
    journal = LedgerTransaction.objects.filter(entries__account__journal=True).distinct()
    assert journal.exists() and not journal.filter(chain_hash__isnull=True).exists()
    assert chain.verify().broken is None  # the seamless players' journal postings are links of their chains


@pytest.mark.postgresql
def test_credits_survive_a_killed_worker_and_a_wallet_outage(wallet, simulate, celery_workers, settings):
    platform = wallet()
    simulate(platform, workers=False, rounds=3, seed=5, fault_rate=0, settle_timeout=0.1, timeout_ms=3000)
    resulted = Round.objects.filter(state=Round.State.RESULTED)
    assert resulted.count() == 9

    platform.faults(timeout_rate=1.0, timeout_ms=2500)  # credits applied, their answers held back
    doomed = celery_workers("doomed", extra_env={"SETTLEMENT_REDRIVE_AFTER_SECONDS": "0"})
    redrive_unsettled.delay()
    wait_for(lambda: platform.state()["counters"]["calls"]["credit"] > 0, what="credits in flight", every=0.05)
    doomed.kill()
    in_flight = WalletMovement.objects.filter(call="credit", state=State.PENDING).count()
    assert in_flight > 0

    platform.faults(timeout_rate=0.0, down=True)
    celery_workers("survivor", concurrency=2, extra_env={"SETTLEMENT_REDRIVE_AFTER_SECONDS": "0"})
    wait_for(lambda: not resulted.exists(), tick=redrive_unsettled.delay, every=2, what="every round settled")
    pending = WalletMovement.objects.filter(state=State.PENDING)
    failing = pending.filter(failing_since__isnull=False)
    wait_for(lambda: failing.values("player").distinct().count() == pending.values("player").distinct().count(),
             tick=redrive.delay, every=1, what="every player's next movement tried against the wallet that is down")
    settings.WALLET_ALERT_AFTER_SECONDS = 0
    raised, _ = watch_wallets()
    assert raised >= failing.values("player").distinct().count() > 0
    assert set(Alert.objects.filter(kind=Alert.Kind.WALLET_FAILING).values_list("severity", flat=True)) == {"critical"}

    platform.faults(down=False)
    wait_for(lambda: not WalletMovement.objects.filter(state=State.PENDING).exists(), tick=redrive.delay, every=2,
             what="the credits delivered once the wallet is back")
    assert watch_wallets() == (0, raised)
    assert not Alert.objects.filter(kind=Alert.Kind.WALLET_FAILING, acknowledged_at__isnull=True).exists()
    assert_exactly_once(platform)


@pytest.mark.postgresql
def test_credits_queued_when_the_broker_restarts_are_delivered_by_beat(wallet, simulate, tmp_path):
    for app in ("settlement", "wallets"):  # the beat rows (a transactional test may have flushed them)
        importlib.import_module(f"{app}.migrations.0002_beat_schedule").Migration.operations[0].code(apps, None)
    platform = wallet()
    simulate(platform, workers=False, rounds=3, seed=6, fault_rate=0, settle_timeout=0.1)
    purge_queues()  # the settle tasks are lost: beat's re-drive settles the rounds
    platform.faults(down=True)

    broker = Redis(tmp_path)
    env = {"CELERY_BROKER_URL": broker.url(0), "CELERY_RESULT_BACKEND": broker.url(1),
           "SETTLEMENT_REDRIVE_AFTER_SECONDS": "0"}
    processes = [Beat(extra_env=env, log_dir=tmp_path)]
    try:
        processes.append(Worker("private", concurrency=2, extra_env=env, log_dir=tmp_path))
        wait_for(lambda: not Round.objects.filter(state=Round.State.RESULTED).exists(), timeout=150,
                 what="beat's re-drive to settle every round")
        wait_for(lambda: WalletMovement.objects.filter(call="credit", attempts__gt=0).exists(), what="credits tried")
        broker.restart()  # every queued and unacknowledged delivery task is gone
        platform.faults(down=False)
        try:
            # kombu can exit a worker whose broker went away (restoring its unacked messages on a
            # connection already closed): its supervisor starts it again.
            wait_for(lambda: not WalletMovement.objects.filter(state=State.PENDING).exists(), timeout=150,
                     what="beat's wallets.redrive after the broker came back",
                     tick=lambda: [process.supervise() for process in processes])
        except AssertionError as timed_out:
            logs = "\n".join(f"--- {p.name}:\n{p.output()[-4000:]}" for p in processes)
            raise AssertionError(f"{timed_out}\n{logs}") from None
    finally:
        for process in processes:
            process.stop()
        broker.stop()
    assert_exactly_once(platform)


def test_a_wrong_secret_is_refused_and_shows_as_a_failing_movement(wallet, simulate):
    platform = wallet()
    result = simulate(platform, secret="not-the-secret", rounds=1, variants=("classic",), fault_rate=0,
                      wallet_timeout=2)
    assert not result.delivered and result.stats.rejected.get("wallet_unavailable", 0) > 0
    state = platform.state()
    assert state["counters"]["bad_signatures"] > 0 and not state["transactions"]
    assert not Bet.objects.filter(player__operator__code="east").exists()
    rollbacks = WalletMovement.objects.filter(call="rollback")
    assert rollbacks.exists() and set(rollbacks.values_list("state", flat=True)) == {State.PENDING}
    assert {m.last_error for m in rollbacks} == {"HTTP 401"}
    assert set(WalletMovement.objects.filter(call="debit").values_list("state", flat=True)) == {State.UNKNOWN}
