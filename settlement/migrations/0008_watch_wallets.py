"""The wallet watch: the ``wallet_failing`` alert kind, and its beat job as a django-celery-beat row
(every minute; like ``0002_beat_schedule``, created only when missing, by task name, never changed
afterwards: operators edit it in the admin)."""

from django.db import migrations, models

from adminkit.schema import beat_jobs

TASK = "settlement.watch_wallets"


class Migration(migrations.Migration):
    dependencies = [
        ("settlement", "0007_alert_settlement_stuck"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [
        migrations.AlterField(
            model_name="alert",
            name="kind",
            field=models.CharField(choices=[("reconcile_breach", "Ledger breach"),
                                            ("settlement_failed", "Settlement failed"),
                                            ("settlement_stuck", "Round resulted long ago, still not settled"),
                                            ("negative_wallet", "Wallet negative after a reversal"),
                                            ("rtp_deviation", "Observed RTP off the theoretical figure"),
                                            ("wallet_failing", "An operator's wallet keeps failing a movement")],
                                   max_length=32),
        ),
        beat_jobs(("settlement: alert on failing operator wallets", TASK, 60, "seconds")),
    ]
