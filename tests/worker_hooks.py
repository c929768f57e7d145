"""Test-only pause points of a real worker process, so that a test can kill it there. Loaded only by
the tests' workers (``tests.workers.Worker``: ``celery worker --include tests.worker_hooks``) and
inert unless ``WORKER_TEST_PAUSE`` names a point:

- ``before:<task name>``: the task is about to run (nothing written yet);
- ``inside:<task name>``: the task's transaction has written rows and a round event, not committed;
- ``after:<task name>``: the task returned (its transaction committed), its message not yet
  acknowledged.

At the point the worker writes ``WORKER_TEST_PAUSE reached <point>`` to its log and sleeps.

And one task, ``tests.database_backend`` (``database_backend``): the pid of the PostgreSQL backend
serving the worker process's database connection, so that a test can tell whether the worker kept
its connection from one task to the next.
"""

import os
import sys
import time

from celery import shared_task
from celery.signals import task_postrun, task_prerun

POINT = os.environ.get("WORKER_TEST_PAUSE", "")


def _pause():
    sys.stderr.write(f"WORKER_TEST_PAUSE reached {POINT}\n")
    sys.stderr.flush()
    time.sleep(3600)


def _pause_at_round_event(execute, sql, params, many, context):
    if 'INSERT INTO "tables_roundevent"' in sql:
        _pause()
    return execute(sql, params, many, context)


@task_prerun.connect
def _before(task=None, **kwargs):
    if POINT == f"before:{task.name}":
        _pause()
    if POINT == f"inside:{task.name}":
        from django.db import connection

        connection.execute_wrappers.append(_pause_at_round_event)


@task_postrun.connect
def _after(task=None, **kwargs):
    if POINT == f"after:{task.name}":
        _pause()


@shared_task(name="tests.database_backend", ignore_result=False)
def database_backend():
    """``pg_backend_pid()`` of the worker process's database connection."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]
