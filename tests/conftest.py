"""Shared test fixtures. The suite runs on PostgreSQL and Redis (see `make test`)."""

import pytest

from tests.workers import Worker, purge_queues


@pytest.fixture
def celery_workers(transactional_db, tmp_path):
    """Start real Celery worker processes: ``start(name, concurrency=1, extra_env=None) -> Worker``.

    The broker is purged before and after; every worker is stopped at the end of the test."""
    purge_queues()
    started = []

    def start(name="w1", concurrency=1, extra_env=None):
        worker = Worker(name, concurrency=concurrency, extra_env=extra_env, log_dir=tmp_path)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()
    purge_queues()


@pytest.fixture(autouse=True)
def _fresh_cache():
    """The cache is shared Redis in `make test`: no test sees another's throttle counters or reports."""
    from django.core.cache import cache

    cache.clear()
    yield
