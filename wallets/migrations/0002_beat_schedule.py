"""The wallet port's beat jobs as django-celery-beat rows (created when missing, by task name;
editable in the admin afterwards)."""

from django.db import migrations

JOBS = [
    # (name, task, every, period)
    ("wallets: re-drive the outbox", "wallets.redrive", 10, "seconds"),
    ("wallets: roll back stakes a crash left", "wallets.recover_stakes", 60, "seconds"),
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
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(task__in=[t for _, t, _, _ in JOBS]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("wallets", "0001_movements"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_jobs, delete_jobs)]
