"""On PostgreSQL, ``ledger_overdraft(key, wallet, holds, needs)``: raises the error the
``wallet_not_negative`` constraint raises (SQLSTATE 23514, that constraint's name), with a message
naming the posting. ``accounts.services.post``'s one statement calls it for the first entry that
would take a wallet below zero without permission, so that a refused posting fails inside the
statement (which may be a transaction of its own) and writes nothing."""

from django.db import migrations

from adminkit.schema import postgresql_only

SQL = """
CREATE OR REPLACE FUNCTION ledger_overdraft(posting_key text, wallet bigint, holds numeric, needs numeric)
RETURNS numeric AS $$
BEGIN
    RAISE EXCEPTION '%: wallet % holds %, needs %', posting_key, wallet, holds, needs
        USING ERRCODE = 'check_violation', CONSTRAINT = 'wallet_not_negative';
END;
$$ LANGUAGE plpgsql;
"""
REVERSE = "DROP FUNCTION IF EXISTS ledger_overdraft(text, bigint, numeric, numeric);"


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_ledger_immutable")]
    operations = [postgresql_only(SQL, REVERSE)]
