"""The settlement beat jobs as django-celery-beat rows (editable in the admin afterwards: this
migration only creates rows that are missing, by task name, and never changes existing ones)."""

from django.db import migrations

from adminkit.schema import beat_jobs

JOBS = [
    # (name, task, every, period)
    ("settlement: re-drive unsettled rounds", "settlement.redrive_unsettled", 60, "seconds"),
    ("settlement: void rounds suspended too long", "settlement.void_overdue", 60, "seconds"),
    ("settlement: reconcile the ledger", "settlement.reconcile_ledger", 1, "hours"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("settlement", "0001_models"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [beat_jobs(*JOBS)]
