"""On PostgreSQL, ``ledger_balance_limit(key, wallet, balance)``: raises a check violation named
``wallet_balance_limit``, with a message naming the posting. ``accounts.services.post``'s one
statement calls it for the first entry that would bring a wallet's balance to
``accounts.money.MONEY_LIMIT`` or beyond (either sign), so that the posting fails inside the
statement and writes nothing (``accounts.exceptions.BalanceLimit``)."""

from django.db import migrations

from adminkit.schema import postgresql_only

SQL = """
CREATE OR REPLACE FUNCTION ledger_balance_limit(posting_key text, wallet bigint, balance numeric)
RETURNS numeric AS $$
BEGIN
    RAISE EXCEPTION '%: wallet % would hold %', posting_key, wallet, balance
        USING ERRCODE = 'check_violation', CONSTRAINT = 'wallet_balance_limit';
END;
$$ LANGUAGE plpgsql;
"""
REVERSE = "DROP FUNCTION IF EXISTS ledger_balance_limit(text, bigint, numeric);"


class Migration(migrations.Migration):
    dependencies = [("accounts", "0011_operator_code_unique_ignoring_case")]
    operations = [postgresql_only(SQL, REVERSE)]
