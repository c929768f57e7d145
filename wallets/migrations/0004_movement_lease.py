from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('wallets', '0003_movement_balance_is_the_calls'),
    ]

    operations = [
        migrations.AddField(
            model_name='walletmovement',
            name='leased_until',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
