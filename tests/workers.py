"""Real Celery worker processes for tests (not eager mode): started on the Redis broker against
the test database, so tests that use them must commit their data (``transaction=True``)."""

import os
import signal
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
    ``tests.worker_hooks``; ``extra_env`` adds variables (e.g. ``WORKER_TEST_PAUSE``). ``stop()``
    ends it gracefully, ``kill()`` with SIGKILL (a crash)."""

    def __init__(self, name, concurrency=1, extra_env=None, log_dir=None):
        env = dict(os.environ, DATABASE_URL=database_url(), PYTHONUNBUFFERED="1", **(extra_env or {}))
        self.name = name
        self.log_path = Path(log_dir or "/tmp") / f"celery-{name}-{os.getpid()}.log"
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-l", "info", "-c", str(concurrency),
             "-n", f"{name}@%h", "--include", "tests.worker_hooks", "--without-gossip", "--without-mingle",
             "--without-heartbeat"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_ready()

    def _wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker {self.name} exited: {self.log_path.read_text()[-3000:]}")
            if "ready." in self.log_path.read_text():
                return
            time.sleep(0.2)
        raise RuntimeError(f"worker {self.name} not ready in {timeout}s: {self.log_path.read_text()[-3000:]}")

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


def purge_queues():
    """Drop messages a previous test left in the broker, including unacked ones Redis would redeliver."""
    app.control.purge()
    with app.connection_for_write() as conn:
        client = conn.default_channel.client
        for key in ("unacked", "unacked_index", "unacked_mutex"):
            client.delete(key)
