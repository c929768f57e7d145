"""Concurrent requests on PostgreSQL (real transactions, one connection per thread)."""

import threading
from decimal import Decimal

import pytest
from django.db import connection

from accounts.models import LedgerTransaction
from settlement.voids import cancel
from tests.factories import BoundlessTableFactory, CurrencyFactory, PlayerFactory, RoundFactory
from wagering.models import Bet
from wagering.placement import place_bet

from .helpers import balance

pytestmark = pytest.mark.django_db(transaction=True)


def run_at_once(jobs):
    """Run the callables in threads released together; returns their results or exceptions."""
    barrier = threading.Barrier(len(jobs))
    results = [None] * len(jobs)

    def run(i, job):
        try:
            barrier.wait()
            results[i] = job()
        except Exception as e:  # noqa: BLE001 - the test inspects it
            results[i] = e
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, job)) for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def bet_job(round_id, key, player, stake="60.00", type="main"):
    return lambda: place_bet(round_id=round_id, key=key, player=player, type=type, stake=stake)


def test_two_bets_exceeding_the_balance_together_exactly_one_accepted():
    CurrencyFactory(code="EUR")
    player = PlayerFactory(funded="100.00")
    round_ = RoundFactory(table=BoundlessTableFactory())
    results = run_at_once([bet_job(round_.pk, "a", player.code), bet_job(round_.pk, "b", player.code, type="pairs")])
    errors = [r for r in results if isinstance(r, Exception)]
    assert len(errors) == 1 and errors[0].code == "insufficient_funds"
    assert Bet.objects.count() == 1 and balance(player) == Decimal("40.00")


def test_rules_8_two_stacked_bets_at_once_exactly_one_accepted():
    """The limits apply per player, position and bet type: two main bets of one player sent at
    once from two connections place one (the second waits for the wallet, then sees the first)."""
    CurrencyFactory(code="EUR")
    player = PlayerFactory(funded="100.00")
    round_ = RoundFactory(table=BoundlessTableFactory())
    results = run_at_once([bet_job(round_.pk, k, player.code, "10.00") for k in ("a", "b")])
    errors = [r for r in results if isinstance(r, Exception)]
    assert len(errors) == 1 and errors[0].code == "bet_stacked"
    assert Bet.objects.count() == 1 and balance(player) == Decimal("90.00")


def test_same_key_ten_times_at_once_is_one_bet_one_debit():
    CurrencyFactory(code="EUR")
    player = PlayerFactory(funded="100.00")
    round_ = RoundFactory(table=BoundlessTableFactory())
    results = run_at_once([bet_job(round_.pk, "same", player.code, "10.00") for _ in range(10)])
    assert not [r for r in results if isinstance(r, Exception)], results
    assert {r.bets[0].pk for r in results} == {Bet.objects.get().pk}
    assert sum(r.created for r in results) == 1
    assert LedgerTransaction.objects.filter(kind="stake").count() == 1 and balance(player) == Decimal("90.00")


def test_round_cancelled_while_bets_arrive_refunds_every_accepted_stake():
    """RULES 10: a void refunds every bet; no stake is lost whatever the interleaving."""
    CurrencyFactory(code="EUR")
    players = [PlayerFactory(funded="50.00") for _ in range(8)]
    round_ = RoundFactory(table=BoundlessTableFactory())
    jobs = [bet_job(round_.pk, f"k{i}", p.code, "10.00") for i, p in enumerate(players)]
    jobs.insert(4, lambda: cancel(round_id=round_.pk, reason="fault"))
    results = run_at_once(jobs)
    rejected = [r for r in results if isinstance(r, Exception)]
    assert all(r.code == "betting_closed" for r in rejected), rejected
    assert Bet.objects.exclude(state="refunded").count() == 0
    assert all(balance(p) == Decimal("50.00") for p in players)
    assert LedgerTransaction.objects.filter(kind="refund").count() == Bet.objects.count()
