"""The wallet port's beat jobs as django-celery-beat rows (created when missing, by task name;
editable in the admin afterwards)."""

from django.db import migrations

from adminkit.schema import beat_jobs

JOBS = [
    # (name, task, every, period)
    ("wallets: re-drive the outbox", "wallets.redrive", 10, "seconds"),
    ("wallets: roll back stakes a crash left", "wallets.recover_stakes", 60, "seconds"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("wallets", "0001_movements"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [beat_jobs(*JOBS)]
