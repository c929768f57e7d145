"""The Celery application (namespace ``CELERY`` in Django settings, tasks autodiscovered).

Run workers with ``celery -A config worker`` and exactly ONE beat with ``celery -A config beat``
(schedules live in the database, editable in the admin via django-celery-beat).
"""

import gc
import os

from celery import Celery
from celery.signals import worker_process_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
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


@app.task(name="config.health_check", ignore_result=False)
def health_check():
    """Prove a worker is alive and reaches the database: returns ``{"worker": "ok", "database": "ok"}``.

    ``celery -A config call config.health_check`` from operations; the Celery smoke test uses it."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"worker": "ok", "database": "ok"}
