"""What on-call reads at ``-l warning``: a task retried after a database error, and a task lost with
its worker process, each named with its id and arguments (the round)."""

import logging
from types import SimpleNamespace

import pytest
from billiard.exceptions import WorkerLostError
from celery.signals import task_retry
from django.db import OperationalError

from config.celery import LoggedRequest, log_lost_task
from settlement.tasks import settle_round


def test_a_retry_after_a_database_error_is_a_warning(caplog):
    request = SimpleNamespace(task="settlement.settle_round", id="abc", args=[4242])
    with caplog.at_level(logging.WARNING):
        task_retry.send(sender=settle_round, request=request, reason=OperationalError("server closed the connection"),
                        einfo=None)
    [record] = [r for r in caplog.records if r.name == "config.tasks"]
    assert record.levelno == logging.WARNING
    assert "settlement.settle_round[abc] args=[4242]" in record.getMessage()
    assert "OperationalError: server closed the connection" in record.getMessage()


@pytest.mark.django_db
def test_a_task_lost_with_its_worker_is_named_with_its_round(caplog):
    assert settle_round.Request is LoggedRequest  # every task of the platform
    request = SimpleNamespace(name="settlement.settle_round", id="def", args=[4243])
    with caplog.at_level(logging.WARNING):
        log_lost_task(request, WorkerLostError("Worker exited prematurely: signal 9 (SIGKILL)."))
    [record] = [r for r in caplog.records if r.name == "config.tasks"]
    assert record.levelno == logging.WARNING
    assert "settlement.settle_round[def] args=[4243] lost with its worker process" in record.getMessage()
