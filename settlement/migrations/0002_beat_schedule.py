"""The settlement beat jobs as django-celery-beat rows (editable in the admin afterwards: this
migration only creates rows that are missing, by task name, and never changes existing ones)."""

from django.db import migrations

JOBS = [
    # (name, task, every, period)
    ("settlement: re-drive unsettled rounds", "settlement.redrive_unsettled", 60, "seconds"),
    ("settlement: void rounds suspended too long", "settlement.void_overdue", 60, "seconds"),
    ("settlement: reconcile the ledger", "settlement.reconcile_ledger", 1, "hours"),
]


def create_jobs(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for name, task, every, period in JOBS:
        if PeriodicTask.objects.filter(task=task).exists():
            continue
        interval, _ = IntervalSchedule.objects.get_or_create(every=every, period=period)
        PeriodicTask.objects.create(name=name, task=task, interval=interval, enabled=True)


def delete_jobs(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(task__in=[task for _, task, _, _ in JOBS]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("settlement", "0001_models"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_jobs, delete_jobs)]
