"""Each round keeps the engine's rules version it opened under (its game record's). Rounds played
before were played by the rules of version 1, the first."""

from django.db import migrations, models

import tables.models


class Migration(migrations.Migration):

    dependencies = [
        ('tables', '0004_round_pay_tables'),
    ]

    operations = [
        migrations.AddField(
            model_name='round',
            name='rules_version',
            field=models.CharField(default=tables.models.rules_version_now, editable=False, max_length=16),
        ),
    ]
