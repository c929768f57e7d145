"""Copy each bet's table and currency onto the bet (``Bet.table``, ``Bet.currency``) so that bet
lists, their filters and totals read one table, and index ``(table, placed_at, id)`` for the Bet
Record's table search. Added nullable, filled by one ``UPDATE ... FROM`` (PostgreSQL, SQLite >= 3.33),
then made NOT NULL."""

import django.db.models.deletion
from django.db import migrations, models

import wagering.models

BACKFILL = """UPDATE wagering_bet SET table_id = r.table_id, currency_id = t.currency_id
              FROM tables_round r JOIN tables_table t ON t.id = r.table_id
              WHERE r.id = wagering_bet.round_id AND wagering_bet.table_id IS NULL"""


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0001_initial"),
        ("tables", "0003_theoretical_rtp"),
        ("wagering", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="bet", name="table",
            field=wagering.models.CopiedForeignKey(copy_from="round.table_id", db_index=False, null=True,
                                                   on_delete=django.db.models.deletion.PROTECT, related_name="+",
                                                   to="tables.table"),
        ),
        migrations.AddField(
            model_name="bet", name="currency",
            field=wagering.models.CopiedForeignKey(copy_from="round.table.currency_id", db_index=False, null=True,
                                                   on_delete=django.db.models.deletion.PROTECT, related_name="+",
                                                   to="accounts.currency"),
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
        migrations.AlterField(
            model_name="bet", name="table",
            field=wagering.models.CopiedForeignKey(copy_from="round.table_id", db_index=False,
                                                   on_delete=django.db.models.deletion.PROTECT, related_name="+",
                                                   to="tables.table"),
        ),
        migrations.AlterField(
            model_name="bet", name="currency",
            field=wagering.models.CopiedForeignKey(copy_from="round.table.currency_id", db_index=False,
                                                   on_delete=django.db.models.deletion.PROTECT, related_name="+",
                                                   to="accounts.currency"),
        ),
        migrations.AddIndex(
            model_name="bet",
            index=models.Index(fields=["table", "placed_at", "id"], name="bet_table_placed"),
        ),
    ]
