"""A ledger transaction's key on PostgreSQL (accounts migration 0015): compared byte by byte, its
unique index the only one on it, serving exact lookups and prefix matches (a bet's resettles,
``resettle:<bet>:``) alike."""

import pytest
from django.db import connection, transaction

from accounts.models import LedgerTransaction

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]


def _indexes():
    """``{index name: its definition}`` of the ledger transaction table."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'accounts_ledgertransaction'")
        return dict(cursor.fetchall())


def _plan(queryset):
    """PostgreSQL's plan of ``queryset`` with sequential scans priced out (the test's table is tiny)."""
    sql, params = queryset.query.sql_with_params()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_the_key_has_one_index_in_byte_order_and_the_table_no_pattern_index():
    indexes = _indexes()
    on_key = [name for name, definition in indexes.items() if "(key" in definition]
    assert on_key == ["accounts_ledgertransaction_key_key"], indexes
    assert not [name for name, definition in indexes.items() if "pattern_ops" in definition], indexes
    with connection.cursor() as cursor:
        cursor.execute("SELECT collation_name FROM information_schema.columns "
                       "WHERE table_name = 'accounts_ledgertransaction' AND column_name = 'key'")
        assert cursor.fetchone() == ("C",)


@pytest.mark.parametrize("lookup", ["key__startswith", "key__in", "key"])
def test_a_key_is_found_through_the_unique_index(lookup):
    value = ["payout:7"] if lookup == "key__in" else "resettle:7:"
    plan = _plan(LedgerTransaction.objects.filter(**{lookup: value}))
    assert "accounts_ledgertransaction_key_key" in plan, plan

