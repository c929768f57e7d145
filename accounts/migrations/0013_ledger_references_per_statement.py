"""The ledger's references (an entry's transaction and account, a transaction's currency) checked by
the database once per statement instead of once per row.

A foreign key checks each row it inserts with a query of its own at commit: a settlement's one
statement of 20,000 payouts (20,000 transactions, 40,000 entries) made 100,000 such checks, as long
as the statement itself. Here the constraints are dropped and, on PostgreSQL, a trigger after each
INSERT statement checks the rows it wrote at once, through the statement's transition table: every
account, transaction and currency they name exists (the accounts and currencies locked ``FOR KEY
SHARE``, as a foreign key locks them, so that no concurrent delete removes them before the commit);
else SQLSTATE 23503 (``foreign_key_violation``, a Django ``IntegrityError``, as before). Deleting an
account an entry names, or a currency a transaction names, or changing their keys, fails the same
way (a trigger before the delete or update); a transaction or an entry can be neither (migration
0002). That trigger reads the entries with its statement's snapshot, which at REPEATABLE READ or
SERIALIZABLE may predate an entry committed meanwhile (a foreign key checks the latest rows
instead): there the delete is refused with SQLSTATE 40001 (``serialization_failure``), to be
retried at READ COMMITTED. On SQLite (the zero-setup default) each inserted or updated row is
checked by a trigger of its own; a delete is refused by the models' ``on_delete=PROTECT`` only
(flushing a test database deletes the tables in any order). SQLite drops a table's triggers when
a migration rebuilds the table: one that alters these two tables must create them again (the
tests of ``tests/accounts/test_references.py`` fail otherwise). As for every table, TRUNCATE (test
teardown) and disabling the triggers (the tables' owner) are not checked.

The models' ``db_constraint=False`` says so to Django: joins and ``on_delete`` are unchanged."""

from django.db import migrations, models

#: The references: ``(name, table, column, referenced table, its key, the key's SQL type, deletable)``;
#: a deletable row is locked by the check and guarded against deletes (transactions are immutable).
REFERENCES = [
    ("entry_account", "accounts_ledgerentry", "account_id", "accounts_account", "id", "bigint", True),
    ("entry_transaction", "accounts_ledgerentry", "transaction_id", "accounts_ledgertransaction", "id", "bigint",
     False),
    ("transaction_currency", "accounts_ledgertransaction", "currency_id", "accounts_currency", "code", "varchar",
     True),
]


def _check(name, table, column, referenced, key, sql_type, deletable):
    """The statement trigger that checks reference ``name`` of the rows an INSERT into ``table``
    wrote, and for a ``deletable`` referenced row the row trigger that refuses its delete."""
    lock = " FOR KEY SHARE" if deletable else ""
    sql = f"""
CREATE FUNCTION ledger_{name}_check() RETURNS trigger AS $$
DECLARE
    named {sql_type}[];
    found bigint;
BEGIN
    SELECT array_agg(DISTINCT {column}) INTO named FROM inserted;
    SELECT count(*) INTO found FROM (SELECT 1 FROM {referenced} WHERE {key} = ANY(named){lock}) AS r;
    IF found <> coalesce(cardinality(named), 0) THEN
        RAISE EXCEPTION 'a row of {table} names no row of {referenced}'
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'ledger_{name}';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER ledger_{name}_check AFTER INSERT ON {table}
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION ledger_{name}_check();
"""
    if deletable:
        sql += f"""
CREATE FUNCTION ledger_{name}_guard() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.{key} = NEW.{key} THEN
        RETURN NEW;
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'removing % of {referenced} is checked at READ COMMITTED only: retry there', OLD.{key}
            USING ERRCODE = 'serialization_failure';
    END IF;
    IF EXISTS (SELECT 1 FROM {table} WHERE {column} = OLD.{key}) THEN
        RAISE EXCEPTION '% of {referenced} is named by {table}', OLD.{key}
            USING ERRCODE = 'foreign_key_violation', CONSTRAINT = 'ledger_{name}';
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER ledger_{name}_guard BEFORE DELETE OR UPDATE OF {key} ON {referenced}
    FOR EACH ROW EXECUTE FUNCTION ledger_{name}_guard();
"""
    return sql


def _dropped(name, table, column, referenced, key, sql_type, deletable):
    return (f"DROP TRIGGER IF EXISTS ledger_{name}_guard ON {referenced}; "
            f"DROP FUNCTION IF EXISTS ledger_{name}_guard(); "
            f"DROP TRIGGER IF EXISTS ledger_{name}_check ON {table}; DROP FUNCTION IF EXISTS ledger_{name}_check();")


def _sqlite_checks(name, table, column, referenced, key, sql_type, deletable):
    """SQLite's triggers for reference ``name``: an inserted row, and a row whose ``column`` is
    updated, must name an existing row of ``referenced``."""
    when = f"WHEN NOT EXISTS (SELECT 1 FROM {referenced} WHERE {key} = NEW.{column})"
    fail = f"BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: ledger_{name}'); END"
    return [f"CREATE TRIGGER ledger_{name}_check BEFORE INSERT ON {table} {when} {fail}",
            f"CREATE TRIGGER ledger_{name}_update BEFORE UPDATE OF {column} ON {table} {when} {fail}"]


def _statements(vendor, forwards):
    """The statements that create (``forwards``) or drop the checks on ``vendor``."""
    if vendor == "postgresql":
        return ["".join((_check if forwards else _dropped)(*reference) for reference in REFERENCES)]
    if forwards:
        return [sql for reference in REFERENCES for sql in _sqlite_checks(*reference)]
    return [f"DROP TRIGGER IF EXISTS ledger_{reference[0]}_{event}" for reference in REFERENCES
            for event in ("check", "update")]


def forwards(apps, schema_editor):
    for sql in _statements(schema_editor.connection.vendor, True):
        schema_editor.execute(sql, params=None)


def backwards(apps, schema_editor):
    for sql in _statements(schema_editor.connection.vendor, False):
        schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0012_ledger_balance_limit")]
    operations = [
        migrations.AlterField(
            model_name="ledgerentry", name="account",
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=models.PROTECT,
                                    related_name="entries", to="accounts.account")),
        migrations.AlterField(
            model_name="ledgerentry", name="transaction",
            field=models.ForeignKey(db_constraint=False, on_delete=models.PROTECT, related_name="entries",
                                    to="accounts.ledgertransaction")),
        migrations.AlterField(
            model_name="ledgertransaction", name="currency",
            field=models.ForeignKey(db_constraint=False, on_delete=models.PROTECT, to="accounts.currency")),
        migrations.RunPython(forwards, backwards),
    ]
