"""On PostgreSQL, round events cannot be updated or deleted (the same trigger function as the
ledger's rows; TRUNCATE, used only by test teardown, is not affected)."""

from django.db import migrations

SQL = """
CREATE TRIGGER roundevent_immutable BEFORE UPDATE OR DELETE ON tables_roundevent
    FOR EACH ROW EXECUTE FUNCTION ledger_row_immutable();
"""
REVERSE = "DROP TRIGGER IF EXISTS roundevent_immutable ON tables_roundevent;"


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(SQL, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(REVERSE, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("tables", "0001_initial"),
        ("accounts", "0002_ledger_immutable"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
