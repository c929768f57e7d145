"""Reliability of settlement with REAL worker processes on Redis and PostgreSQL (not eager mode):
duplicate delivery, a worker killed mid-settlement, void racing settle, a poison record, the beat
jobs. Each test commits its data (``transaction=True``); the ledger reconciles after each."""

import re
import threading
import time

import pytest
from django.db import connection

from accounts.models import LedgerTransaction
from settlement import tasks
from settlement.models import PendingSettlement
from settlement.voids import void_round
from tables.models import Round
from tables.services import suspend
from tests.factories import BoundlessTableFactory
from wagering.models import Bet

from .helpers import BETS, FUNDS, STAKED, balance, played_round

pytestmark = pytest.mark.django_db(transaction=True)
SETTLE = "settlement.settle_round"


def wait_for(check, timeout=60, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def state(round_):
    return Round.objects.get(pk=round_.pk).state


def done(workers, task=SETTLE):
    """How many ``task`` runs the workers finished (succeeded, failed or retried)."""
    pattern = re.compile(rf"Task {re.escape(task)}\[[^\]]+\] (succeeded|raised|retry)")
    return sum(len(pattern.findall(w.output())) for w in workers)


def assert_paid_once(round_, players):
    """Each bet SETTLED with its expected return, posted exactly once, every balance right."""
    for rid, (_, _, _, expected) in BETS.items():
        bet = Bet.objects.get(round=round_, record_id=rid)
        assert (bet.state, bet.returned) == (Bet.State.SETTLED, expected)
        assert LedgerTransaction.objects.filter(key=f"payout:{bet.pk}").count() == (1 if expected else 0)
        assert balance(players[rid]) == FUNDS - STAKED[rid] + expected


@pytest.mark.postgresql
def test_duplicate_delivery_to_two_workers_pays_each_bet_once(celery_workers):
    workers = [celery_workers("dup-a", concurrency=2), celery_workers("dup-b", concurrency=2)]
    round_, players = played_round()  # record_result queues the task once
    for _ in range(5):
        tasks.settle_round.delay(round_.pk)
    wait_for(lambda: done(workers) >= 6, what="six deliveries")
    assert state(round_) == Round.State.SETTLED
    assert_paid_once(round_, players)
    assert all("Traceback" not in w.output() for w in workers)
    assert round_.events.filter(kind="settled").count() == 1


@pytest.mark.postgresql
@pytest.mark.parametrize("point", ["before", "inside", "after"])
def test_worker_killed_mid_settlement_then_the_redrive_completes_it(celery_workers, point):
    pause = f"{point}:settlement.settle_round"
    doomed = celery_workers(f"doomed-{point}", extra_env={"WORKER_TEST_PAUSE": pause})
    round_, players = played_round()
    wait_for(lambda: f"WORKER_TEST_PAUSE reached {pause}" in doomed.output(), what=f"pause at {pause}")
    doomed.kill()
    expected = Round.State.SETTLED if point == "after" else Round.State.RESULTED
    wait_for(lambda: state(round_) == expected, what="the killed transaction to be gone")
    rescuer = celery_workers("rescuer", extra_env={"SETTLEMENT_REDRIVE_AFTER_SECONDS": "0"})
    tasks.redrive_unsettled.delay()
    wait_for(lambda: state(round_) == Round.State.SETTLED, what="the re-drive to settle it")
    if point != "after":
        wait_for(lambda: done([rescuer]) >= 1, what="the re-driven task")
    assert_paid_once(round_, players)
    assert round_.events.filter(kind="settled").count() == 1


@pytest.mark.postgresql
def test_void_racing_settle_never_pays_and_refunds_both(celery_workers):
    workers = [celery_workers("race", concurrency=2)]
    outcomes = set()
    for i in range(4):
        round_, players = played_round()  # settle_round is queued on commit ...
        void_round(round_id=round_.pk, reason="race", actor="operator:test")  # ... and races this void
        wait_for(lambda i=i: done(workers) >= i + 1, what="the settle task")
        assert state(round_) == Round.State.VOIDED
        for p in players.values():  # every stake back, no return kept
            assert balance(p) == FUNDS
        bets = Bet.objects.filter(round=round_)
        paid = {b.pk for b in bets if LedgerTransaction.objects.filter(key=f"payout:{b.pk}").exists()}
        reversed_ = {b.pk for b in bets if LedgerTransaction.objects.filter(key=f"reverse:{b.pk}").exists()}
        assert paid == reversed_  # a payout only ever stands with its reversal
        outcomes.add("reversal" if paid else "void first")
    assert outcomes


def test_void_and_settle_at_once_in_two_threads():
    """The same race without a broker: both services at once; one wins, the other is a no-op or a
    proper reversal."""
    from settlement.services import settle_round
    for _ in range(3):
        round_, players = played_round()
        barrier = threading.Barrier(2)

        def run(fn, barrier=barrier, **kwargs):
            barrier.wait()
            try:
                fn(**kwargs)
            finally:
                connection.close()

        threads = [threading.Thread(target=run, args=(settle_round,), kwargs={"round_id": round_.pk}),
                   threading.Thread(target=run, args=(void_round,),
                                    kwargs={"round_id": round_.pk, "reason": "race", "actor": "system"})]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert state(round_) == Round.State.VOIDED
        assert all(balance(p) == FUNDS for p in players.values())


@pytest.mark.postgresql
def test_poison_record_fails_once_and_other_rounds_still_settle(celery_workers):
    workers = [celery_workers("poison")]
    table = BoundlessTableFactory()
    poison, _ = played_round(table)
    Round.objects.filter(pk=poison.pk).update(state="resulted", record={**poison.record, "dealer": ["7D"]})
    PendingSettlement.objects.filter(round=poison).delete()  # settled from its record: refused
    good, players = played_round(table)
    for _ in range(3):
        tasks.settle_round.delay(poison.pk)
    wait_for(lambda: state(good) == Round.State.SETTLED, what="the good round")
    wait_for(lambda: done(workers) >= 5, what="every delivery")
    assert state(poison) == Round.State.SETTLEMENT_FAILED and Round.objects.get(pk=poison.pk).failure_reason
    assert_paid_once(good, players)
    log = workers[0].output()
    assert "retry" not in log.lower() and "Traceback" not in log
    time.sleep(1)
    settled = len(re.findall(rf"Task {re.escape(SETTLE)}\[[^\]]+\] succeeded in ", log))
    assert done(workers) == 5 and settled == 5  # 1 on record + 3 sent + 1 good: no storm (the seal runs aside)


@pytest.mark.postgresql
def test_beat_redrives_a_lost_task_and_voids_a_round_suspended_too_long(celery_workers):
    round_, players = played_round()  # its task is queued with no worker running ...
    from tests.workers import purge_queues
    purge_queues()  # ... and lost
    quick = BoundlessTableFactory(suspend_limit_seconds=0)
    stuck, stuck_players = played_round(quick, result=False)
    suspend(round_id=stuck.pk, reason="card scanner fault")
    celery_workers("beat-jobs", extra_env={"SETTLEMENT_REDRIVE_AFTER_SECONDS": "0"})
    tasks.redrive_unsettled.delay()
    tasks.void_overdue.delay()
    wait_for(lambda: state(round_) == Round.State.SETTLED, what="the re-drive")
    wait_for(lambda: state(stuck) == Round.State.VOIDED, what="the overdue void")
    assert_paid_once(round_, players)
    assert all(balance(p) == FUNDS for p in stuck_players.values())
