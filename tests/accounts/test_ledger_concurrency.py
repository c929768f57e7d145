"""The ledger under real concurrency on PostgreSQL: row locks, not luck, keep balances exact and
every wallet's hash chain unbroken (accounts.chain)."""

from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from accounts import chain
from accounts import services as ledger
from accounts.exceptions import IdempotencyConflict, InsufficientFunds
from accounts.models import Account, Currency, LedgerEntry, LedgerTransaction
from accounts.reconcile import reconcile

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def funded():
    eur = Currency.objects.create(code="EUR", minor_units=2)
    player = ledger.create_player(user=get_user_model().objects.create(username="hot"), code="hot")
    wallet = ledger.wallet_for(player=player, currency=eur)
    ledger.deposit(wallet=wallet, amount="100.00", key="dep:hot")
    return wallet, ledger.house_account(name="table:T1", currency=eur, operator=ledger.default_operator())


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
    assert reconcile().ok and chain.verify().broken is None


def test_the_same_key_posted_concurrently_moves_money_once(funded):
    wallet, house = funded
    results = in_threads(lambda i: ledger.post_stake(wallet=wallet, house=house, amount="10.00",
                                                     key="stake:same").pk, 20)
    wallet.refresh_from_db()
    assert len(set(results)) == 1
    assert wallet.balance == Decimal("90.00")
    assert reconcile().ok and chain.verify().broken is None


def test_a_refused_posting_outside_a_transaction_writes_nothing(funded):
    """Outside a transaction one posting is one statement (PostgreSQL): refused inside it, whole."""
    wallet, house = funded
    assert connection.get_autocommit()
    with pytest.raises(InsufficientFunds, match="cannot cover 100.01"):
        ledger.post_stake(wallet=wallet, house=house, amount="100.01", key="stake:big")
    wallet.refresh_from_db()
    assert wallet.balance == Decimal("100.00") and not LedgerTransaction.objects.filter(key="stake:big").exists()
    assert LedgerEntry.objects.count() == 2 and reconcile().ok


def test_one_key_for_different_wallets_at_once_moves_money_once(funded):
    """Ten posts of one key from ten wallets (no shared lock): the first takes the key, the others
    wait for it and are refused as a different movement."""
    _, house = funded
    eur = Currency.objects.get(code="EUR")
    wallets = []
    for i in range(10):
        player = ledger.create_player(user=get_user_model().objects.create(username=f"w{i}"), code=f"w{i}")
        wallets.append(ledger.wallet_for(player=player, currency=eur))
        ledger.deposit(wallet=wallets[-1], amount="10.00", key=f"dep:w{i}")

    def stake(i):
        try:
            return ledger.post_stake(wallet=wallets[i], house=house, amount="1.00", key="stake:clash").pk
        except IdempotencyConflict:
            return None

    results = in_threads(stake, 10)
    assert len([r for r in results if r is not None]) == 1
    assert LedgerTransaction.objects.filter(key="stake:clash").count() == 1
    assert sorted(Decimal(w.balance) for w in [type(w).objects.get(pk=w.pk) for w in wallets]) \
        == [Decimal("9.00")] + [Decimal("10.00")] * 9
    assert reconcile().ok and chain.verify().broken is None


def test_parallel_postings_on_many_wallets_and_one_house_keep_every_chain_intact(funded):
    """Twelve threads, each staking and being paid on its own wallet (a third of them seamless
    players' journal wallets) and two of them on one shared wallet, all against one house: every
    transaction is a link, every wallet's chain as long as its postings, and nothing is broken."""
    hot, house = funded
    eur = hot.currency
    wallets = []
    for i in range(12):
        player = ledger.create_player(user=get_user_model().objects.create(username=f"many-{i}"), code=f"many-{i}")
        wallet = ledger.wallet_for(player=player, currency=eur)
        ledger.deposit(wallet=wallet, amount="50.00", key=f"dep:many-{i}")
        wallets.append(wallet)
    Account.objects.filter(pk__in=[w.pk for w in wallets[::3]]).update(journal=True)

    def play(i):
        wallet = hot if i in (0, 1) else wallets[i]
        for j in range(5):
            ledger.post([ledger.Posting(f"stake:{i}:{j}", "stake", wallet, house, Decimal("1.00")),
                         ledger.Posting(f"payout:{i}:{j}", "payout", house, wallet, Decimal("1.50"))])

    in_threads(play, 12)
    assert not LedgerTransaction.objects.filter(chain_hash__isnull=True).exists()
    links = LedgerTransaction.objects.values_list("prev_hash", flat=True)
    heads = [bytes(h) for h in links if h is not None]
    assert len(heads) == len(set(heads))  # no two transactions follow the same link: no fork
    assert reconcile().ok and chain.verify().broken is None


def test_big_batches_staking_on_one_wallet_at_once_never_overdraw_it(funded):
    """Batches past ``PREPARED_UP_TO`` postings (``_post_bulk``: the balance read under the lock,
    checked in Python): each batch is taken whole or refused whole."""
    wallet, house = funded
    n = ledger.PREPARED_UP_TO + 1

    def stake(i):
        try:
            ledger.post([ledger.Posting(f"stake:{i}:{j}", "stake", wallet, house, Decimal("1.00")) for j in range(n)])
            return 1
        except InsufficientFunds:
            return 0

    accepted = sum(in_threads(stake, 8))
    wallet.refresh_from_db()
    assert accepted == 100 // n
    assert wallet.balance == Decimal("100.00") - n * accepted
    assert LedgerTransaction.objects.filter(kind="stake").count() == n * accepted
    assert reconcile().ok and chain.verify().broken is None


def test_one_key_in_big_batches_for_different_wallets_at_once_moves_money_once(funded):
    """Batches past ``PREPARED_UP_TO`` postings (``_post_bulk``), each on its own wallet (no shared
    lock) with its own keys and one key they share: the batch that takes the shared key is written
    whole, every other one is refused whole (a different movement)."""
    _, house = funded
    eur = Currency.objects.get(code="EUR")
    wallets = []
    for i in range(6):
        player = ledger.create_player(user=get_user_model().objects.create(username=f"b{i}"), code=f"b{i}")
        wallets.append(ledger.wallet_for(player=player, currency=eur))
        ledger.deposit(wallet=wallets[-1], amount="10.00", key=f"dep:b{i}")
    n = ledger.PREPARED_UP_TO

    def stake(i):
        batch = [ledger.Posting(f"stake:b{i}:{j}", "stake", wallets[i], house, Decimal("0.10")) for j in range(n)]
        try:
            ledger.post([*batch, ledger.Posting("stake:clash", "stake", wallets[i], house, Decimal("1.00"))])
            return i
        except IdempotencyConflict:
            return None

    taken = [i for i in in_threads(stake, 6) if i is not None]
    assert len(taken) == 1
    assert LedgerTransaction.objects.filter(key__startswith="stake:").count() == n + 1
    balances = {w.pk: Account.objects.get(pk=w.pk).balance for w in wallets}
    assert balances == {w.pk: Decimal("10.00") - (Decimal("1.00") + n * Decimal("0.10") if i in taken else 0)
                        for i, w in enumerate(wallets)}
    assert reconcile().ok and chain.verify().broken is None
