"""The keys of the two tables a settlement writes a row to per payout, on PostgreSQL: a ledger
transaction's (accounts migration 0015) compared byte by byte, its unique index the only one on it,
serving exact lookups and prefix matches (a bet's resettles, ``resettle:<bet>:``) alike; a wallet
movement's (wallets migration 0007) without the prefix-match twins no query used."""

import pytest
from django.db import connection, transaction

from accounts.models import LedgerTransaction

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]


def _indexes(table="accounts_ledgertransaction"):
    """``{index name: its definition}`` of ``table``."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [table])
        return dict(cursor.fetchall())


def _plan(queryset):
    """PostgreSQL's plan of ``queryset`` with sequential scans priced out (the test's table is tiny)."""
    sql, params = queryset.query.sql_with_params()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_a_ledger_transactions_key_has_one_index_in_byte_order_and_the_table_no_pattern_index():
    indexes = _indexes()
    on_key = [name for name, definition in indexes.items() if "(key" in definition]
    assert on_key == ["accounts_ledgertransaction_key_key"], indexes
    assert not [name for name, definition in indexes.items() if "pattern_ops" in definition], indexes
    with connection.cursor() as cursor:
        cursor.execute("SELECT collation_name FROM information_schema.columns "
                       "WHERE table_name = 'accounts_ledgertransaction' AND column_name = 'key'")
        assert cursor.fetchone() == ("C",)


@pytest.mark.parametrize("lookup", ["key__startswith", "key__in", "key"])
def test_a_ledger_transaction_is_found_by_key_through_the_unique_index(lookup):
    value = ["payout:7"] if lookup == "key__in" else "resettle:7:"
    plan = _plan(LedgerTransaction.objects.filter(**{lookup: value}))
    assert "accounts_ledgertransaction_key_key" in plan, plan


def test_a_wallet_movement_has_no_pattern_index_and_its_operator_one_index():
    indexes = _indexes("wallets_walletmovement")
    assert not [name for name, definition in indexes.items() if "pattern_ops" in definition], indexes
    on_operator = [name for name, definition in indexes.items() if "(operator_id" in definition]
    assert on_operator == ["movement_outbox"], indexes
    assert {"wallets_walletmovement_key_key", "wallets_walletmovement_ledger_key_key"} <= indexes.keys()
