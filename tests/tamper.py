"""Editing rows behind the platform's back, as an intruder with database access would: raw SQL, with
the immutability trigger of the table set aside on PostgreSQL (accounts migration 0002, tables
migration 0002), for the tests that prove the hash chains find it."""

from django.db import connection, transaction

#: The immutability trigger of each table that has one (PostgreSQL).
TRIGGERS = {"accounts_ledgertransaction": "ledgertransaction_immutable",
            "accounts_ledgerentry": "ledgerentry_immutable", "tables_roundevent": "roundevent_immutable",
            "settlement_roundseal": "roundseal_immutable"}


def behind_the_platforms_back(table, sql, params=()):
    """Run ``sql`` (an UPDATE, DELETE or INSERT on ``table``) with ``table``'s trigger disabled for
    that statement only, in a transaction of its own."""
    with transaction.atomic(), connection.cursor() as cursor:
        trigger = TRIGGERS.get(table) if connection.vendor == "postgresql" else None
        if trigger:  # ALTER TABLE refuses a table with deferred checks pending: run them first
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {trigger}")
        cursor.execute(sql, params)
        if trigger:
            cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER {trigger}")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
