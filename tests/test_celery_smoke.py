"""A real worker process on the Redis broker runs a task that reaches the test database."""

import pytest
from django.conf import settings
from django.db import connection, transaction

from accounts.models import Currency
from config.celery import app, health_check


@pytest.mark.postgresql
def test_real_worker_runs_a_task_on_redis(celery_workers):
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    assert not settings.CELERY_TASK_ALWAYS_EAGER
    worker = celery_workers("smoke")
    assert health_check.delay().get(timeout=30) == {"worker": "ok", "database": "ok"}
    assert "config.health_check" in worker.output()


@pytest.mark.postgresql
def test_a_worker_keeps_its_database_connection_between_tasks(celery_workers):
    """A worker process serves task after task on one database connection (a settle task does not
    open a connection, nor warm a new backend's caches, before its first query), and one that the
    database ended is replaced before the next task uses it: that task runs as usual."""
    celery_workers("keeper")

    def backend():
        return app.send_task("tests.database_backend").get(timeout=30)

    first = backend()
    assert backend() == first
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [first])
    replaced = backend()
    assert replaced != first
    assert backend() == replaced


@pytest.mark.django_db(transaction=True)
def test_an_eager_task_leaves_its_callers_connection_alone():
    """A task run in its caller's process (eager, as every task in the zero-setup default) inside
    the caller's transaction keeps that transaction: the caller's connection is not closed around
    the task, though it is obsolete (``close_at`` passed) and in a transaction."""
    with transaction.atomic():
        Currency.objects.create(code="XTS", minor_units=2)
        connection.close_at = 0
        assert health_check.apply().get() == {"worker": "ok", "database": "ok"}
    assert Currency.objects.filter(code="XTS").exists()


def test_worker_settings_are_safe():
    """acks_late + reject on worker lost, JSON only, visibility timeout above any task or countdown."""
    assert settings.CELERY_TASK_ACKS_LATE and settings.CELERY_TASK_REJECT_ON_WORKER_LOST
    assert settings.CELERY_ACCEPT_CONTENT == ["json"]
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    assert visibility > settings.CELERY_TASK_TIME_LIMIT > settings.CELERY_TASK_SOFT_TIME_LIMIT
    assert visibility > settings.CELERY_MAX_COUNTDOWN
