"""The exception report (``settlement.exception_report``): its lines."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0009_player_code_prefix'),
        ('settlement', '0015_round_seals'),
        ('tables', '0005_round_rules_version'),
    ]

    operations = [
        migrations.CreateModel(
            name='ExceptionEntry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('void', 'Void'), ('reversal', 'Reversal of a settled round'), ('resettle', 'Resettle'), ('adjustment', 'Manual adjustment'), ('dispute_decision', 'Dispute decision'), ('pay_tables', 'Pay-table change')], max_length=20)),
                ('amount', models.DecimalField(blank=True, decimal_places=4, max_digits=20, null=True)),
                ('before', models.JSONField(default=dict)),
                ('after', models.JSONField(default=dict)),
                ('transactions', models.JSONField(default=list)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('action', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='exceptions', to='settlement.operatoraction')),
                ('currency', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='accounts.currency')),
                ('dispute', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='settlement.dispute')),
                ('operator', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='accounts.operator')),
                ('player', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='accounts.player')),
                ('round', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='tables.round')),
                ('table', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='tables.table')),
            ],
            options={
                'verbose_name': 'exception',
                'verbose_name_plural': 'exception report',
                'indexes': [models.Index(fields=['created_at', 'id'], name='exception_created'), models.Index(fields=['operator', 'created_at'], name='exception_operator_created')],
            },
        ),
    ]
