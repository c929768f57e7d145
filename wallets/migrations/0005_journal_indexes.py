from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('wallets', '0004_movement_lease'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='walletcall',
            index=models.Index(condition=models.Q(('outcome__in', ['unknown', 'failed'])), fields=['id'], name='call_failure'),
        ),
        migrations.AddIndex(
            model_name='walletmovement',
            index=models.Index(condition=models.Q(('state__in', ['pending', 'failed'])), fields=['id'], name='movement_open'),
        ),
        migrations.AddIndex(
            model_name='walletmovement',
            index=models.Index(fields=['round_ref'], name='movement_round'),
        ),
    ]
