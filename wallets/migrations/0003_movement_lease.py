from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('wallets', '0002_beat_schedule'),
    ]

    operations = [
        migrations.AddField(
            model_name='walletmovement',
            name='leased_until',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
