"""Issue 20, item 14: parallel game-server calls on the zero-setup default (SQLite) against a real
server process: no 500, never an HTML page; a database lock wait that runs out is a JSON 503 with
``Retry-After`` and changes nothing."""

import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from django.conf import settings

from tables.studios import create_service_key
from tests.conftest import on_postgresql
from tests.factories import BoundlessTableFactory, CurrencyFactory, PlayerFactory, RoundFactory
from wagering.models import Bet

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(on_postgresql(), reason="SQLite's one writer at a time")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(transactional_db):
    """``start(busy_timeout) -> base URL``: ``manage.py runserver`` (threaded) on the test database."""
    started = []

    def start(busy_timeout):
        port = _free_port()
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{settings.DATABASES['default']['NAME']}",
               "SECRET_KEY": "test-only-secret-key", "DEBUG": "false", "ALLOWED_HOSTS": "127.0.0.1",
               "SECURE_SSL_REDIRECT": "false", "SQLITE_BUSY_TIMEOUT": str(busy_timeout), "ENV_FILE": "/dev/null"}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        process = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                                   cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(process)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                requests.get(url + "/api/game/v1/tables/", timeout=1)
                return url
            except requests.ConnectionError:
                time.sleep(0.2)
        raise RuntimeError("runserver did not start")

    yield start
    for process in started:
        process.terminate()
        process.wait(10)


def _post_20_bets_at_once(url):
    CurrencyFactory(code="EUR")
    players = [PlayerFactory(funded="100.00") for _ in range(20)]
    round_ = RoundFactory(table=BoundlessTableFactory())
    _, key, _ = create_service_key(studio="default", name="parallel")
    session = {"Authorization": f"Bearer {key}"}

    def post(player):
        return requests.post(f"{url}/api/game/v1/rounds/{round_.pk}/bets/", headers=session, timeout=60,
                             json={"key": f"k-{player.pk}", "player": player.code, "type": "main", "stake": "1.00"})

    with ThreadPoolExecutor(20) as pool:
        return list(pool.map(post, players))


def test_20_parallel_bets_on_sqlite_are_all_placed(server):
    answers = _post_20_bets_at_once(server(busy_timeout=20))
    assert [a.status_code for a in answers] == [201] * 20
    assert Bet.objects.count() == 20


def test_a_lock_wait_that_runs_out_is_a_json_503_with_retry_after(server):
    answers = _post_20_bets_at_once(server(busy_timeout=0))
    assert {a.status_code for a in answers} <= {201, 503}, [(a.status_code, a.text[:200]) for a in answers]
    busy = [a for a in answers if a.status_code == 503]
    for answer in busy:
        assert answer.headers["Content-Type"].startswith("application/json") and answer.headers["Retry-After"] == "1"
        assert answer.json()["code"] == "database_busy"
    assert Bet.objects.count() == 20 - len(busy)
