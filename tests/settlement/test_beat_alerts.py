"""Faults an operator must see: a beat job that cannot be queued (the broker down) is an Alert,
cleared once queued again (config.beat); a task lost with its worker process is an Alert naming it."""

from datetime import timedelta
from unittest import mock

import pytest
from billiard.exceptions import WorkerLostError
from celery.beat import ScheduleEntry, SchedulingError
from kombu.exceptions import OperationalError

from config.beat import AlertingScheduler
from config.celery import app, log_lost_task
from settlement import tasks
from settlement.models import Alert
from tests.factories import RoundFactory

pytestmark = pytest.mark.django_db


def _tick(scheduler, entry, error=None):
    with mock.patch.object(tasks.redrive_unsettled, "apply_async", side_effect=error, return_value="sent"):
        if error is None:
            return scheduler.apply_async(entry, advance=False)
        with pytest.raises(SchedulingError):
            scheduler.apply_async(entry, advance=False)


def test_a_beat_job_beat_cannot_queue_is_an_alert_until_queued_again():
    scheduler = AlertingScheduler(app=app, lazy=True)
    scheduler.should_sync = lambda: False  # its sync with the schedule rows closes the test's connection
    entry = ScheduleEntry(name="settlement: re-drive lost settlements", task="settlement.redrive_unsettled",
                          schedule=timedelta(minutes=1), app=app)
    for _ in range(2):
        _tick(scheduler, entry, OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused."))
    alert = Alert.objects.get(kind=Alert.Kind.BEAT_JOB_FAILING)
    assert alert.severity == "critical" and alert.acknowledged_at is None and alert.payload["failures"] == 2
    assert "re-drive lost settlements" in alert.message and "Connection refused" in alert.message
    _tick(scheduler, entry)
    alert.refresh_from_db()
    assert alert.acknowledged_at is not None
    _tick(scheduler, entry, OperationalError("down again"))
    assert Alert.objects.filter(kind=Alert.Kind.BEAT_JOB_FAILING, acknowledged_at__isnull=True).count() == 1


def test_a_task_lost_with_its_worker_is_an_alert_on_its_round():
    round_ = RoundFactory()
    request = mock.Mock(id="abc", args=[round_.pk])
    request.name = "settlement.settle_round"
    log_lost_task(request, WorkerLostError("Worker exited prematurely: signal 9 (SIGKILL)."))
    alert = Alert.objects.get(kind=Alert.Kind.TASK_LOST)
    assert alert.round == round_ and alert.severity == "critical" and "settlement.settle_round[abc]" in alert.message
