"""The RTP watch (issue 9): the ``rtp_deviation`` alert kind, and its beat job as a
django-celery-beat row (every 10 minutes; like ``0002_beat_schedule``, created only when missing,
by task name, never changed afterwards: operators edit it in the admin)."""

from django.db import migrations, models

from adminkit.schema import beat_jobs

TASK = "settlement.rtp_watch"


class Migration(migrations.Migration):
    dependencies = [
        ("settlement", "0002_beat_schedule"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [
        migrations.AlterField(
            model_name="alert",
            name="kind",
            field=models.CharField(choices=[("reconcile_breach", "Ledger breach"),
                                            ("settlement_failed", "Settlement failed"),
                                            ("negative_wallet", "Wallet negative after a reversal"),
                                            ("rtp_deviation", "Observed RTP off the theoretical figure")],
                                   max_length=32),
        ),
        beat_jobs(("settlement: RTP watch (observed vs theoretical)", TASK, 10, "minutes")),
    ]
