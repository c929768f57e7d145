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


@worker_process_init.connect
@worker_ready.connect
def freeze_startup_objects(**kwargs):
    """Once a process that runs tasks has loaded Django and the tasks (a prefork pool's child:
    ``worker_process_init``; a solo or threads pool's worker itself: ``worker_ready``), move what it loaded out of the
    garbage collector's reach (``gc.freeze``): those objects live as long as the process, and a
    big settlement (tens of thousands of results) triggers full collections that would traverse
    them every time (measured: the engine and detail encoding of a 60,000-bet round 0.30 -> 0.16 s)."""
    gc.freeze()


@app.task(name="config.health_check", ignore_result=False)
def health_check():
    """Prove a worker is alive and reaches the database: returns ``{"worker": "ok", "database": "ok"}``.

    ``celery -A config call config.health_check`` from operations; the Celery smoke test uses it."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"worker": "ok", "database": "ok"}
