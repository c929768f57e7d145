"""The chain of round records (``settlement.seals``): round seals, immutable on PostgreSQL (the
ledger's trigger function), each table's chain head, and the beat job that seals the recent rounds
whose seal task was lost (every minute; created only when missing, by task name, as
``0002_beat_schedule``). Rounds that reached their final step before this migration are not
sealed (``verify_chain`` counts them as waiting; ``seal_unsealed`` seals those of the last two days)."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

from adminkit.schema import beat_jobs, immutable_rows

TASK = "settlement.seal_unsealed"


class Migration(migrations.Migration):

    dependencies = [
        ('settlement', '0014_pending_settlement'),
        ('tables', '0005_round_rules_version'),
        ('accounts', '0002_ledger_immutable'),
        ('django_celery_beat', '0019_alter_periodictasks_options'),
    ]

    operations = [
        migrations.CreateModel(
            name='SealChain',
            fields=[
                ('table', models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, primary_key=True, related_name='seal_chain', serialize=False, to='tables.table')),
                ('sequence', models.PositiveIntegerField(default=0)),
                ('head', models.BinaryField(blank=True, null=True)),
            ],
        ),
        migrations.CreateModel(
            name='RoundSeal',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('sequence', models.PositiveIntegerField()),
                ('state', models.CharField(max_length=20)),
                ('correction', models.PositiveIntegerField(default=0)),
                ('content', models.JSONField()),
                ('prev_hash', models.BinaryField(blank=True, null=True)),
                ('chain_hash', models.BinaryField()),
                ('sealed_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('round', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='seals', to='tables.round')),
                ('table', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='seals', to='tables.table')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('table', 'sequence'), name='one_seal_sequence_per_table'), models.UniqueConstraint(fields=('round', 'state', 'correction'), name='one_seal_per_round_step')],
            },
        ),
        immutable_rows("settlement_roundseal"),
        beat_jobs(("settlement: seal rounds whose seal task was lost", TASK, 60, "seconds")),
    ]
