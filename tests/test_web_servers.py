"""The web servers as they are started (real processes on this project's ports): ``manage.py
runserver`` (what ``make run`` and ``make serve`` serve) takes many connections at once, and
gunicorn with the project's ``gunicorn.conf.py`` answers its own refusals (a request line or
headers too large, a malformed request) as the APIs' JSON errors; neither logs a secret of a
path (``delivery.api.operator.redaction``)."""

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUNSERVER_PORT = 8351
GUNICORN_PORT = 8352
#: Connections opened at once: more than Django's runserver queued (10) before refusing.
PARALLEL = 50


def sqlite_env(tmp_path):
    """The zero-setup default's environment (SQLite in ``tmp_path``, no broker, production-like)."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "CACHE_URL")}
    return {**clean, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "ENV_FILE": "/dev/null",
            "SECRET_KEY": "test-only-secret-key", "DEBUG": "false", "SECURE_SSL_REDIRECT": "false",
            "ALLOWED_HOSTS": "127.0.0.1", "PYTHONUNBUFFERED": "1"}


@contextmanager
def server(command, port, env, log):
    """The process of ``command`` once it accepts connections on ``port``; stopped on exit. Its
    output goes to ``log`` (a path)."""
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start:\n" + log.read_text()
                time.sleep(0.2)
        yield process
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)
            process.terminate()
        process.wait(timeout=30)


def exchange(sock, request):
    """Send ``request`` (bytes) on ``sock`` and read the whole answer (the server closes)."""
    sock.settimeout(30)
    sock.sendall(request)
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    sock.close()
    return b"".join(chunks)


def get(path, port, method="GET"):
    return f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode("latin-1")


def connect_all(port, count, within=5):
    """``count`` connections to ``port`` opened at once, those the server's kernel completed within
    ``within`` seconds (connections beyond its listen queue wait unanswered)."""
    pending = selectors.DefaultSelector()
    for _ in range(count):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        pending.register(sock, selectors.EVENT_WRITE)
    connected, deadline = [], time.monotonic() + within
    while pending.get_map() and time.monotonic() < deadline:
        for key, _ in pending.select(timeout=0.2):
            pending.unregister(key.fileobj)
            if key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                connected.append(key.fileobj)
    for key in list(pending.get_map().values()):
        key.fileobj.close()
    return connected


@pytest.fixture
def runserver(tmp_path):
    command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{RUNSERVER_PORT}", "--noreload"]
    with server(command, RUNSERVER_PORT, sqlite_env(tmp_path), tmp_path / "runserver.log") as process:
        yield process, tmp_path / "runserver.log"


def test_runserver_queues_and_answers_50_connections_at_once(runserver):
    """While the server is busy (here: stopped) every one of 50 connections is queued, not
    dropped; once it runs again each gets its JSON answer."""
    process, _ = runserver
    os.kill(process.pid, signal.SIGSTOP)
    try:
        connected = connect_all(RUNSERVER_PORT, PARALLEL)
    finally:
        os.kill(process.pid, signal.SIGCONT)
    assert len(connected) == PARALLEL
    with ThreadPoolExecutor(PARALLEL) as pool:
        answers = list(pool.map(lambda sock: exchange(sock, get("/api/v1/me", RUNSERVER_PORT)), connected))
    assert all(answer.startswith(b"HTTP/1.1 401 ") and b'"code":"not_authenticated"' in answer
               for answer in answers), answers[:3]


def test_runserver_logs_no_session_token_of_a_path(runserver):
    _, log = runserver
    sock = socket.create_connection(("127.0.0.1", RUNSERVER_PORT))
    answer = exchange(sock, get("/api/operator/v1/sessions/secret-token-1", RUNSERVER_PORT, method="DELETE"))
    assert answer.startswith(b"HTTP/1.1 401 ")
    time.sleep(0.5)  # the access line is written after the answer
    logged = log.read_text()
    assert '"DELETE /api/operator/v1/sessions/(token) HTTP/1.1" 401' in logged, logged
    assert "secret-token-1" not in logged


@pytest.fixture(params=[[], ["--threads", "2", "-k", "config.web.gunicorn.ThreadWorker"]], ids=["sync", "gthread"])
def gunicorn(request, tmp_path):
    """``gunicorn config.wsgi`` from the checkout's root, as README's "Web processes in production"
    runs it (one worker; sync, or gthread as README says to start it), its access log on."""
    command = [sys.executable, "-m", "gunicorn", "config.wsgi", "-w", "1", "-b", f"127.0.0.1:{GUNICORN_PORT}",
               "--access-logfile", "-", *request.param]
    with server(command, GUNICORN_PORT, sqlite_env(tmp_path), tmp_path / "gunicorn.log"):
        yield tmp_path / "gunicorn.log"


def answer_of(raw):
    """``(status, headers, body)`` of the raw HTTP answer ``raw``."""
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


@pytest.mark.parametrize("request_bytes, status, code", [
    (get("/api/v1/me?q=" + "x" * 5000, GUNICORN_PORT), 414, "request_line_too_long"),
    (b"GET /api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"x" * 9000 + b"\r\n\r\n", 431,
     "request_headers_too_large"),
    (b"GET /api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(120)) + b"\r\n",
     431, "request_headers_too_large"),
    (b"NOT AN HTTP REQUEST\r\n\r\n", 400, "bad_request"),
    (b"GET /api/v1/me HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n", 400, "bad_request"),
])
def test_gunicorn_answers_its_own_refusals_as_json(gunicorn, request_bytes, status, code):
    sock = socket.create_connection(("127.0.0.1", GUNICORN_PORT))
    answered, headers, body = answer_of(exchange(sock, request_bytes))
    assert answered == status, body
    assert headers["content-type"] == "application/json"
    assert int(headers["content-length"]) == len(body)
    answer = json.loads(body)
    assert set(answer) == {"code", "detail"} and answer["code"] == code and answer["detail"].endswith(".")


def test_gunicorn_logs_no_session_token_of_a_path(gunicorn):
    for request_bytes in (get("/api/operator/v1/sessions/secret-token-1", GUNICORN_PORT, method="DELETE"),
                          b"DELETE /api/operator/v1/sessions/secret-token-2 HTTP/1.1 extra\r\n\r\n"):
        exchange(socket.create_connection(("127.0.0.1", GUNICORN_PORT)), request_bytes)
    time.sleep(0.5)  # the access line is written after the answer
    logged = gunicorn.read_text()
    assert '"DELETE /api/operator/v1/sessions/(token) HTTP/1.1" 401' in logged, logged
    assert "secret-token" not in logged, logged
