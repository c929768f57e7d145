"""The Celery application (namespace ``CELERY`` in Django settings, tasks autodiscovered).

Run workers with ``celery -A config worker`` and exactly ONE beat with ``celery -A config beat``
(schedules live in the database, editable in the admin via django-celery-beat).
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="config.health_check", ignore_result=False)
def health_check():
    """Prove a worker is alive and reaches the database: returns ``{"worker": "ok", "database": "ok"}``.

    ``celery -A config call config.health_check`` from operations; the Celery smoke test uses it."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"worker": "ok", "database": "ok"}
