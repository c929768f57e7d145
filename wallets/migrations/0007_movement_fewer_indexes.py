"""Four fewer indexes on a wallet movement (the seamless outbox: one row per payout of a round):
on PostgreSQL the ``varchar_pattern_ops`` twins Django added beside ``key``, ``ledger_key`` and
``currency`` (no query matches their prefixes: keys are found whole), and everywhere the
operator's own index (``movement_outbox`` leads with the operator: it serves the same lookups,
an operator's delete refused by ``PROTECT`` included). Inserting 20,000 movements in a
rolled-back transaction updated fourteen indexes per row, now ten."""

import django.db.models.deletion
from django.db import migrations, models

from adminkit.schema import pattern_indexes_dropped


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0015_ledger_key_in_byte_order"),
        ("wallets", "0006_movement_claim"),
    ]

    operations = [
        migrations.AlterField(
            model_name="walletmovement",
            name="operator",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT,
                                    related_name="movements", to="accounts.operator"),
        ),
        pattern_indexes_dropped("wallets_walletmovement", ["key", "ledger_key", "currency_id"]),
    ]
