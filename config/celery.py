"""The Celery application (namespace ``CELERY`` in Django settings, tasks autodiscovered).

Run workers with ``celery -A config worker`` and exactly ONE beat with ``celery -A config beat``
(schedules live in the database, editable in the admin via django-celery-beat).
"""

import gc
import logging
import os

from billiard.exceptions import WorkerLostError
from celery import Celery
from celery.contrib.django.task import DjangoTask
from celery.signals import task_postrun, task_prerun, task_retry, worker_process_init, worker_ready
from celery.worker.request import Request

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
logger = logging.getLogger("config.tasks")


def log_lost_task(request, exc):
    """A WARNING naming the task, its id and arguments (a round id, a player list) whose worker
    process died under it (``WorkerLostError``: a SIGKILL, the OOM killer): what on-call reads at
    ``-l warning`` to find the round; the message goes back to the queue (``task_reject_on_worker_lost``).
    And a ``task_lost`` Alert (``settlement.jobs.task_lost``) for the operators."""
    logger.warning("task %s[%s] args=%r lost with its worker process (%s): requeued", request.name, request.id,
                   request.args, exc)
    from settlement.jobs import task_lost  # the app registry is ready once a worker runs tasks

    try:
        task_lost(task=request.name, task_id=request.id, args=list(request.args or ()), error=exc)
    except Exception:
        logger.exception("could not write the alert of lost task %s[%s]", request.name, request.id)


class LoggedRequest(Request):
    """A task request whose loss with its worker process is logged (``log_lost_task``)."""

    def on_failure(self, exc_info, send_failed_event=True, return_ok=False):
        if isinstance(exc_info.exception, WorkerLostError):
            log_lost_task(self, exc_info.exception)
        return super().on_failure(exc_info, send_failed_event=send_failed_event, return_ok=return_ok)


class PlatformTask(DjangoTask):
    """Every task of the platform: Celery's Django task (``delay_on_commit``) with requests as
    ``LoggedRequest``."""

    Request = LoggedRequest


@task_retry.connect
def log_retry(request=None, reason=None, **kwargs):
    """A retry (after a database error: ``OperationalError``) is logged at WARNING with the task, its
    id and arguments; Celery's own line is at INFO."""
    logger.warning("task %s[%s] args=%r retried after %s: %s", request.task, request.id, request.args,
                   type(reason).__name__, reason)


app = Celery("config", task_cls=PlatformTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


#: Allocations between two collections of the youngest generation in a worker process (Python's
#: default: 700). Settling a big round allocates a great many objects, nearly none in cycles: with
#: the default the collector runs over and over during one task, some of its runs over every
#: object of the task; with this threshold it runs rarely. Garbage in cycles then waits a little
#: longer to be freed, which costs little memory.
WORKER_GC_THRESHOLD = 100_000


@worker_process_init.connect
@worker_ready.connect
def tune_garbage_collector(**kwargs):
    """In a process that runs tasks, once it has loaded Django and the tasks (a prefork pool's
    child: ``worker_process_init``; a solo or threads pool's worker itself: ``worker_ready``):
    move what it loaded out of the garbage collector's reach (``gc.freeze``: those objects live as
    long as the process, and every full collection a big settlement triggers would traverse them),
    and collect the young generation every ``WORKER_GC_THRESHOLD`` allocations."""
    gc.freeze()
    gc.set_threshold(WORKER_GC_THRESHOLD, *gc.get_threshold()[1:])


@task_prerun.connect
@task_postrun.connect
def reuse_database_connection(task=None, **kwargs):
    """Before and after every task a worker runs, Django's rule for a kept connection
    (``close_old_connections``: closed once older than ``CONN_MAX_AGE``, or unusable after an
    error; ``CONN_HEALTH_CHECKS`` checks it before its next use): the next task runs on the same
    connection otherwise, without connecting first or a new backend's cold caches
    (``CELERY_DB_REUSE_MAX`` keeps Celery from closing it). An eager task (run in its caller's
    process, maybe inside its transaction) leaves the caller's connection alone."""
    if getattr(task.request, "is_eager", False):
        return
    from django.db import close_old_connections  # Django is set up once a worker runs tasks

    close_old_connections()


@app.task(name="config.health_check", ignore_result=False)
def health_check():
    """Prove a worker is alive and reaches the database: returns ``{"worker": "ok", "database": "ok"}``.

    ``celery -A config call config.health_check`` from operations; the Celery smoke test uses it."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"worker": "ok", "database": "ok"}
