"""On PostgreSQL, round events cannot be updated or deleted (the same trigger function as the
ledger's rows; TRUNCATE, used only by test teardown, is not affected)."""

from django.db import migrations

from adminkit.schema import immutable_rows


class Migration(migrations.Migration):
    dependencies = [
        ("tables", "0001_initial"),
        ("accounts", "0002_ledger_immutable"),
    ]

    operations = [immutable_rows("tables_roundevent")]
