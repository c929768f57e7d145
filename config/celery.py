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
