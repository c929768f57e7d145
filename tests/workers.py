"""Real Celery worker processes for tests (not eager mode): started on the Redis broker against
the test database, so tests that use them must commit their data (``transaction=True``)."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings

from config.celery import app

ROOT = Path(__file__).resolve().parents[1]


def database_url():
    """The URL of the database the test run is using (the ``test_`` one pytest-django created)."""
    db = settings.DATABASES["default"]
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Worker:
    """One ``celery -A config worker`` process, with the test-only pause points of
    ``tests.worker_hooks``; ``extra_env`` adds variables (e.g. ``WORKER_TEST_PAUSE``, or
    ``CELERY_BROKER_URL`` for a broker of the test's own). ``stop()`` ends it gracefully, ``kill()``
    with SIGKILL (a crash)."""

    READY = "ready."

    def __init__(self, name, concurrency=1, extra_env=None, log_dir=None):
        self.name = name
        self._start([sys.executable, "-m", "celery", "-A", "config", "worker", "-l", "info", "-c", str(concurrency),
                     "-n", f"{name}@%h", "--include", "tests.worker_hooks", "--without-gossip", "--without-mingle",
                     "--without-heartbeat"], extra_env, log_dir)

    def _start(self, command, extra_env, log_dir):
        env = dict(os.environ, DATABASE_URL=database_url(), PYTHONUNBUFFERED="1", **(extra_env or {}))
        self.log_path = Path(log_dir or "/tmp") / f"celery-{self.name}-{os.getpid()}.log"
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self._wait_ready()

    def _wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {self.log_path.read_text()[-3000:]}")
            if self.READY in self.log_path.read_text():
                return
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} not ready in {timeout}s: {self.log_path.read_text()[-3000:]}")

    def output(self):
        return self.log_path.read_text()

    def kill(self):
        """SIGKILL the whole process group: the worker dies mid-task, its message is not acked."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


class Beat(Worker):
    """One ``celery -A config beat`` process on the database scheduler (the beat rows of the test
    database), ``extra_env`` as for ``Worker``."""

    READY = "beat: Starting..."

    def __init__(self, name="beat", extra_env=None, log_dir=None):
        self.name = name
        self._start([sys.executable, "-m", "celery", "-A", "config", "beat", "-l", "info", "--pidfile=",
                     "--max-interval", "1"], extra_env, log_dir)


class Redis:
    """A Redis server of the test's own on a free port (no persistence: a restart loses every
    message, as a broker that crashed does): ``url(db)``, ``restart()``, ``stop()``."""

    def __init__(self, log_dir):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.log_path = Path(log_dir) / f"redis-{self.port}.log"
        self._start()

    def url(self, db=0):
        return f"redis://127.0.0.1:{self.port}/{db}"

    def _start(self):
        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no", "--logfile", str(self.log_path)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server on {self.port} did not start")

    def restart(self):
        """SIGKILL the server and start it again on the same port, empty."""
        self.stop()
        self._start()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def purge_queues():
    """Drop messages a previous test left in the broker, including unacked ones Redis would redeliver."""
    app.control.purge()
    with app.connection_for_write() as conn:
        client = conn.default_channel.client
        for key in ("unacked", "unacked_index", "unacked_mutex"):
            client.delete(key)
