"""A bet's idempotency key is unique per table (a table is one studio's), no longer across every
studio: one studio's keys neither block nor reveal another's. The new constraint is built before
the old one goes."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('wagering', '0006_rollups'),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='bet',
            constraint=models.UniqueConstraint(fields=('table', 'idempotency_key'), name='bet_table_idempotency_key'),
        ),
        migrations.RemoveConstraint(
            model_name='bet',
            name='bet_idempotency_key',
        ),
    ]
