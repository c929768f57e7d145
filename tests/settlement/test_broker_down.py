"""Issue 20, item 17: with the broker down, ``record_result`` stores the result and answers the
game server success, saying that settlement is deferred (beat's re-drive queues it once the broker
is back); a retry of the same record queues it again and never hides the round from settlement.
A real server process and a real Redis of its own, stopped and started by the test."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
import requests
from django.conf import settings

from settlement.jobs import unsettled_round_ids
from tables.models import Round
from tables.studios import create_service_key
from tests.factories import scan

from .helpers import played_round, record_for

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.postgresql


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(check, what):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (requests.ConnectionError, redis.ConnectionError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not start")


@pytest.fixture
def broker(tmp_path):
    """A Redis of its own: ``.url``, ``.stop()``, ``.start()``, ``.queued()`` (messages waiting)."""
    port = _free_port()

    class Broker:
        url = f"redis://127.0.0.1:{port}/0"
        process = None

        def start(self):
            self.process = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                                             "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)
            _wait(lambda: redis.Redis(port=port).ping(), "redis")

        def stop(self):
            self.process.terminate()
            self.process.wait(10)

        def queued(self):
            return redis.Redis(port=port).llen("celery")

    found = Broker()
    found.start()
    yield found
    if found.process.poll() is None:
        found.stop()


@pytest.fixture
def server(transactional_db, broker):
    """The platform under ``runserver`` on the test database, its tasks sent to ``broker``."""
    port = _free_port()
    db = settings.DATABASES["default"]
    env = {**os.environ, "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/"
                                         f"{db['NAME']}", "CELERY_BROKER_URL": broker.url,
           "SECRET_KEY": "test-only-secret-key", "DEBUG": "false", "ALLOWED_HOSTS": "127.0.0.1",
           "SECURE_SSL_REDIRECT": "false", "ENV_FILE": "/dev/null"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    process = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    # answering at all is enough (a 401 here: no key); a Response of a 4xx is falsy, hence the status
    _wait(lambda: requests.get(url + "/api/game/v1/tables/", timeout=1).status_code == 401, "runserver")
    yield url
    process.terminate()
    process.wait(10)


def test_with_the_broker_down_the_result_is_stored_and_settlement_deferred(server, broker):
    round_, _ = played_round(result=False)
    record = record_for(round_)
    scan(round_.pk, record)
    _, key, _ = create_service_key(studio="default", name="broker-test")
    post = lambda: requests.post(f"{server}/api/game/v1/rounds/{round_.pk}/result/",  # noqa: E731
                                 headers={"Authorization": f"Bearer {key}"}, json={"record": record}, timeout=60)
    broker.stop()
    down = post()
    assert down.status_code == 200, down.text[:300]
    assert down.json()["state"] == "resulted" and down.json()["settlement"] == "deferred"
    stored = Round.objects.get(pk=round_.pk)
    assert stored.state == Round.State.RESULTED and stored.record == record
    assert round_.pk in unsettled_round_ids(older_than=0)  # the re-drive still finds it
    broker.start()
    retry = post()
    assert retry.status_code == 200 and retry.json()["settlement"] == "queued"
    assert broker.queued() == 1  # the retry queued its settlement
    assert Round.objects.get(pk=round_.pk).resulted_at == stored.resulted_at  # not re-stamped: re-drive keeps it
