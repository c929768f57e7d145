"""The ledger under real concurrency on PostgreSQL: row locks, not luck, keep balances exact."""

from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from accounts import services as ledger
from accounts.exceptions import InsufficientFunds
from accounts.models import Currency, LedgerTransaction
from accounts.reconcile import reconcile

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def funded():
    eur = Currency.objects.create(code="EUR", minor_units=2)
    player = ledger.create_player(user=get_user_model().objects.create(username="hot"), code="hot")
    wallet = ledger.wallet_for(player=player, currency=eur)
    ledger.deposit(wallet=wallet, amount="100.00", key="dep:hot")
    return wallet, ledger.house_account(name="table:T1", currency=eur)


def in_threads(fn, n):
    def run(i):
        try:
            return fn(i)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(run, range(n)))


def test_twenty_threads_staking_on_one_wallet_never_overdraw_it(funded):
    wallet, house = funded

    def stake(i):
        accepted = 0
        for j in range(3):
            try:
                ledger.post_stake(wallet=wallet, house=house, amount="7.00", key=f"stake:{i}:{j}")
                accepted += 1
            except InsufficientFunds:
                pass
        return accepted

    accepted = sum(in_threads(stake, 20))
    wallet.refresh_from_db()
    assert accepted == 14  # 100.00 // 7.00
    assert wallet.balance == Decimal("100.00") - 7 * accepted == Decimal("2.00")
    assert LedgerTransaction.objects.filter(kind="stake").count() == accepted
    assert reconcile().ok


def test_the_same_key_posted_concurrently_moves_money_once(funded):
    wallet, house = funded
    results = in_threads(lambda i: ledger.post_stake(wallet=wallet, house=house, amount="10.00",
                                                     key="stake:same").pk, 20)
    wallet.refresh_from_db()
    assert len(set(results)) == 1
    assert wallet.balance == Decimal("90.00")
    assert reconcile().ok
