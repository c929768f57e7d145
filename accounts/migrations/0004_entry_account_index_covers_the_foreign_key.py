"""Drop the ledger entries' index on ``account_id`` alone: ``entry_account_id`` (account_id, id)
leads with the same column and serves every lookup it served. Only the index goes: Django's own
``AlterField`` would also drop and re-add the foreign key, re-checking every entry of the ledger."""

import django.db.models.deletion
from django.db import migrations, models

INDEX = "accounts_ledgerentry_account_id_7615ec66"  # the name Django gave it (sqlmigrate 0001)


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0003_ledger_overdraft"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="ledgerentry",
                    name="account",
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT,
                                            related_name="entries", to="accounts.account"),
                ),
            ],
            database_operations=[
                migrations.RunSQL(f"DROP INDEX IF EXISTS {INDEX}",
                                  f"CREATE INDEX {INDEX} ON accounts_ledgerentry (account_id)"),
            ],
        ),
    ]
