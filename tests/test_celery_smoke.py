"""A real worker process on the Redis broker runs a task that reaches the test database."""

import pytest
from django.conf import settings

from config.celery import health_check


@pytest.mark.postgresql
def test_real_worker_runs_a_task_on_redis(celery_workers):
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    assert not settings.CELERY_TASK_ALWAYS_EAGER
    worker = celery_workers("smoke")
    assert health_check.delay().get(timeout=30) == {"worker": "ok", "database": "ok"}
    assert "config.health_check" in worker.output()


def test_worker_settings_are_safe():
    """acks_late + reject on worker lost, JSON only, visibility timeout above any task or countdown."""
    assert settings.CELERY_TASK_ACKS_LATE and settings.CELERY_TASK_REJECT_ON_WORKER_LOST
    assert settings.CELERY_ACCEPT_CONTENT == ["json"]
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    assert visibility > settings.CELERY_TASK_TIME_LIMIT > settings.CELERY_TASK_SOFT_TIME_LIMIT
    assert visibility > settings.CELERY_MAX_COUNTDOWN
