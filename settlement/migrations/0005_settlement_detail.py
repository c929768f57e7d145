"""``SettlementDetail``: one row per distinct bet detail of a round's settlement, which bets point
at (``wagering`` 0004), instead of one ``BetSettlement`` row per bet (moved over and dropped in
0006). ``BetSettlement.bet`` gives up the reverse name ``settlement`` to the new field."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("settlement", "0004_operator_action_acknowledge_alert"),
        ("tables", "0003_theoretical_rtp"),
    ]

    operations = [
        migrations.CreateModel(
            name="SettlementDetail",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("correction", models.PositiveIntegerField(default=0)),
                ("detail", models.JSONField()),
                ("settled_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("round", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT,
                                            related_name="settlement_details", to="tables.round")),
            ],
        ),
        migrations.AlterField(
            model_name="betsettlement",
            name="bet",
            field=models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, primary_key=True,
                                       related_name="+", serialize=False, to="wagering.bet"),
        ),
    ]
