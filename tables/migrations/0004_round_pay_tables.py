"""Each round keeps the pay tables it opened with (``Round.pay_tables``), so that a later change
of its table's odds does not re-price it when it is settled, resettled or replayed. Rounds played
before this migration get their table's current overrides: the odds they were priced with until
now."""

from django.db import migrations, models


def table_odds_to_rounds(apps, schema_editor):
    Round, Table = apps.get_model("tables", "Round"), apps.get_model("tables", "Table")
    for table in Table.objects.exclude(pay_tables={}).only("pk", "pay_tables"):
        Round.objects.filter(table=table).update(pay_tables=table.pay_tables)


class Migration(migrations.Migration):

    dependencies = [
        ("tables", "0003_theoretical_rtp"),
    ]

    operations = [
        migrations.AddField(
            model_name="round",
            name="pay_tables",
            field=models.JSONField(blank=True, default=dict, editable=False),
        ),
        migrations.RunPython(table_odds_to_rounds, migrations.RunPython.noop),
    ]
