"""Bulk statements on PostgreSQL with array parameters sent in binary.

Django's psycopg cursor binds parameters on the client: a list becomes an array literal, every
element quoted and escaped in Python (for 60,000 JSON texts, most of a settlement's time). Here the
parameters go to the server in binary (``%b`` placeholders), length-prefixed, never escaped."""

import psycopg
from django.db import connection


def execute_binary(sql, params):
    """Run ``sql`` (PostgreSQL only; placeholders ``%b``) with ``params`` (a list: ``list`` values
    become arrays, cast them in ``sql``: ``%b::bigint[]``; money as ``Decimal``) on Django's
    connection, in its current transaction. Returns the result rows (a list of tuples; empty for a
    statement without result). Database errors are raised as Django's (``IntegrityError``…)."""
    connection.ensure_connection()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else []
