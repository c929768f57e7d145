"""The ledger's references (accounts migration 0013): an entry names an existing transaction and
account, a transaction an existing currency, checked by the database once per statement (an
update of a reference too); on PostgreSQL an account an entry names, or a currency a transaction
names, cannot be deleted, even by a delete racing the insert, nor by one whose snapshot is older
(REPEATABLE READ)."""

import threading
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.db import DatabaseError, IntegrityError, OperationalError, connection, transaction

from accounts import services as ledger
from accounts.models import Account, Currency, LedgerEntry, LedgerTransaction

pytestmark = pytest.mark.django_db


@pytest.fixture
def wallet(db):
    eur = Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})[0]
    player = ledger.create_player(user=get_user_model().objects.create(username="refs"), code="refs")
    return ledger.wallet_for(player=player, currency=eur)


def _entries(txn, *accounts):
    return [LedgerEntry(transaction_id=txn, account_id=account, amount=Decimal(sign))
            for account, sign in zip(accounts, ("-1.00", "1.00"))]


def test_an_entry_naming_no_account_is_refused_and_nothing_of_its_statement_is_written(wallet):
    txn = LedgerTransaction.objects.create(key="refs:account", kind="deposit", currency_id="EUR")
    missing = Account.objects.order_by("-pk").values_list("pk", flat=True).first() + 1000
    with pytest.raises(IntegrityError), transaction.atomic():
        LedgerEntry.objects.bulk_create(_entries(txn.pk, wallet.pk, missing))
    assert not LedgerEntry.objects.filter(transaction=txn).exists()


def test_an_entry_naming_no_transaction_is_refused(wallet):
    house = ledger.house_account(name="table:refs", currency=wallet.currency, operator=ledger.default_operator())
    missing = (LedgerTransaction.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1000
    with pytest.raises(IntegrityError), transaction.atomic():
        LedgerEntry.objects.bulk_create(_entries(missing, house.pk, wallet.pk))
    assert not LedgerEntry.objects.filter(transaction_id=missing).exists()


def test_a_transaction_naming_no_currency_is_refused(wallet):
    with pytest.raises(IntegrityError), transaction.atomic():
        LedgerTransaction.objects.create(key="refs:currency", kind="deposit", currency_id="XXX")
    assert not LedgerTransaction.objects.filter(key="refs:currency").exists()


def test_a_reference_cannot_be_updated_to_name_nothing(wallet):
    ledger.deposit(wallet=wallet, amount="5.00", key="refs:deposit")
    entry = LedgerEntry.objects.get(account=wallet)
    for rows, change in ((LedgerEntry.objects.filter(pk=entry.pk), {"account_id": wallet.pk + 1000}),
                         (LedgerEntry.objects.filter(pk=entry.pk), {"transaction_id": entry.transaction_id + 1000}),
                         (LedgerTransaction.objects.filter(pk=entry.transaction_id), {"currency_id": "XXX"})):
        with pytest.raises(DatabaseError), transaction.atomic():  # PostgreSQL: ledger rows are immutable
            rows.update(**change)
    entry.refresh_from_db()
    assert (entry.account_id, entry.transaction.currency_id) == (wallet.pk, "EUR")


def test_entries_naming_what_exists_are_written_by_a_bulk_post(wallet):
    house = ledger.house_account(name="table:refs", currency=wallet.currency, operator=ledger.default_operator())
    ledger.deposit(wallet=wallet, amount="50.00", key="refs:deposit")
    ledger.post([ledger.Posting(f"refs:stake:{i}", "stake", wallet, house, Decimal("1.00")) for i in range(30)])
    assert LedgerEntry.objects.filter(account=wallet).count() == 31


@pytest.mark.postgresql
def test_an_account_or_currency_the_ledger_names_cannot_be_deleted_even_in_sql(wallet):
    ledger.deposit(wallet=wallet, amount="5.00", key="refs:deposit")
    unused = ledger.house_account(name="table:unused", currency=wallet.currency, operator=ledger.default_operator())
    with connection.cursor() as cursor:
        for sql, params in (("DELETE FROM accounts_account WHERE id = %s", [wallet.pk]),
                            ("UPDATE accounts_account SET id = id + 100000 WHERE id = %s", [wallet.pk]),
                            ("DELETE FROM accounts_currency WHERE code = %s", ["EUR"])):
            with pytest.raises(IntegrityError), transaction.atomic():
                cursor.execute(sql, params)
        cursor.execute("UPDATE accounts_currency SET code = code WHERE code = 'EUR'")  # its key unchanged
        cursor.execute("DELETE FROM accounts_account WHERE id = %s", [unused.pk])  # named by no entry
    assert Account.objects.filter(pk=wallet.pk).exists() and not Account.objects.filter(pk=unused.pk).exists()


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_a_delete_whose_snapshot_may_predate_an_entry_is_refused_to_be_retried(wallet):
    # At REPEATABLE READ the guard's query would not see an entry committed after the snapshot.
    unused = ledger.house_account(name="table:unused", currency=wallet.currency, operator=ledger.default_operator())
    with connection.cursor() as cursor:
        for isolation in ("REPEATABLE READ", "SERIALIZABLE"):
            with pytest.raises(OperationalError, match="READ COMMITTED"), transaction.atomic():
                cursor.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
                cursor.execute("DELETE FROM accounts_account WHERE id = %s", [unused.pk])
    assert Account.objects.filter(pk=unused.pk).exists()


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_a_delete_racing_the_first_entry_of_an_account_waits_for_it_then_is_refused(wallet):
    # The house account is locked by nothing but the check of the entries' references (a post
    # locks the wallets): the delete waits for the inserting transaction, then sees its entry.
    house = ledger.house_account(name="table:refs", currency=wallet.currency, operator=ledger.default_operator())
    inserted, done = threading.Event(), threading.Event()

    def pay():
        try:
            with transaction.atomic():
                ledger.post([ledger.Posting("refs:race", "payout", house, wallet, Decimal("5.00"))])
                inserted.set()
                done.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=pay)
    thread.start()
    try:
        assert inserted.wait(10)
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '300ms'")
            with pytest.raises(OperationalError, match="lock timeout"), transaction.atomic():
                cursor.execute("DELETE FROM accounts_account WHERE id = %s", [house.pk])
            cursor.execute("SET lock_timeout = 0")
    finally:
        done.set()
        thread.join()
    with connection.cursor() as cursor, pytest.raises(IntegrityError), transaction.atomic():
        cursor.execute("DELETE FROM accounts_account WHERE id = %s", [house.pk])
    assert LedgerEntry.objects.filter(account=house).count() == 1
