"""Studio agreements: which operators' players may bet at which studio's tables (the game server bets
for no other player)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0010_operator_time_zone'),
        ('tables', '0006_studios'),
    ]

    operations = [
        migrations.CreateModel(
            name='StudioAgreement',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('operator', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='studio_agreements', to='accounts.operator')),
                ('studio', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='agreements', to='tables.studio')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('studio', 'operator'), name='one_agreement_per_studio_operator')],
            },
        ),
    ]
