"""On PostgreSQL, ledger rows cannot be updated or deleted, whatever code tries (TRUNCATE, used
only by test teardown, is not affected)."""

from django.db import migrations

from adminkit.schema import postgresql_only

SQL = """
CREATE OR REPLACE FUNCTION ledger_row_immutable() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'ledger rows are immutable (% on %)', TG_OP, TG_TABLE_NAME;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER ledgertransaction_immutable BEFORE UPDATE OR DELETE ON accounts_ledgertransaction
    FOR EACH ROW EXECUTE FUNCTION ledger_row_immutable();
CREATE TRIGGER ledgerentry_immutable BEFORE UPDATE OR DELETE ON accounts_ledgerentry
    FOR EACH ROW EXECUTE FUNCTION ledger_row_immutable();
"""
REVERSE = """
DROP TRIGGER IF EXISTS ledgerentry_immutable ON accounts_ledgerentry;
DROP TRIGGER IF EXISTS ledgertransaction_immutable ON accounts_ledgertransaction;
DROP FUNCTION IF EXISTS ledger_row_immutable();
"""


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]
    operations = [postgresql_only(SQL, REVERSE)]
