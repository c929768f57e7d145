"""``Bet.settlement``: the bet's settled detail (``settlement.SettlementDetail``), written by the
same update that settles the bet. Not indexed, so that settling stays a HOT update (0003), and
not a database constraint (see the model)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("wagering", "0003_bet_hot_updates"),
        ("settlement", "0005_settlement_detail"),
    ]

    operations = [
        migrations.AddField(
            model_name="bet",
            name="settlement",
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True,
                                    on_delete=django.db.models.deletion.PROTECT, related_name="bets",
                                    to="settlement.settlementdetail"),
        ),
    ]
