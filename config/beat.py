"""Beat's scheduler (``CELERY_BEAT_SCHEDULER``): django-celery-beat's, whose failures to queue a job
(the broker down) become Alerts (``settlement.jobs.beat_job_failed``), cleared when the job is
queued again. Beat itself only logs them, on its own stderr."""

import logging

from django_celery_beat.schedulers import DatabaseScheduler

from settlement import jobs

logger = logging.getLogger("config.beat")


class AlertingScheduler(DatabaseScheduler):
    def apply_async(self, entry, producer=None, advance=True, **kwargs):
        try:
            result = super().apply_async(entry, producer=producer, advance=advance, **kwargs)
        except Exception as exc:
            self._note(jobs.beat_job_failed, job=entry.name, task=entry.task, error=exc.__cause__ or exc)
            raise
        self._note(jobs.beat_job_queued, job=entry.name)
        return result

    @staticmethod
    def _note(write, **fields):
        """``write(**fields)``; a database fault is logged, never beat's concern."""
        try:
            write(**fields)
        except Exception:
            logger.exception("beat could not write the alert of %s", fields["job"])
