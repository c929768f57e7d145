"""The reference wallet as the tests meet it: a real ``python -m operator_wallet`` process on a
free port of 18100-18199 (``Sandbox``), and ``Platform``, an HTTP client that signs and sends the
protocol's calls as the platform does (docs/wallet-api.md), plus the sandbox's admin endpoints."""

import hashlib
import hmac
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
PORTS = range(18100, 18200)
SECRET = "test-wallet-secret"


def free_port():
    """A port of ``PORTS`` nothing listens on now."""
    for port in random.sample(PORTS, len(PORTS)):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORTS}")


class Sandbox:
    """One wallet process started with ``args`` (extra command-line arguments) and, when given,
    ``--state state``; its output goes to ``log_dir``. ``url``; ``stop()`` (SIGTERM: a clean
    stop), ``kill()`` (SIGKILL: a crash)."""

    def __init__(self, *args, state=None, log_dir):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(log_dir) / f"wallet-{self.port}-{time.monotonic_ns()}.log"
        command = [sys.executable, "-m", "operator_wallet", "--port", str(self.port), "--secret", SECRET, *args]
        if state is not None:
            command += ["--state", str(state)]
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self._wait_listening()

    def _wait_listening(self, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "operator wallet on http://" in self.output():
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"the wallet exited {self.proc.returncode}: {self.output()}")
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"the wallet did not listen in {timeout}s: {self.output()}")

    def output(self):
        return self.log_path.read_text()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def now():
    return datetime.now(UTC).isoformat()


def envelope(fields):
    """``fields`` with a new ``request_id`` and ``sent_at``: one attempt's body."""
    return {"request_id": str(uuid.uuid4()), "sent_at": now(), **fields}


def sign(content, secret=SECRET):
    return hmac.new(secret.encode(), content, hashlib.sha256).hexdigest()


def signed(name, fields, secret=SECRET):
    """``(path, content, headers)`` of one attempt of the call ``name`` with ``fields``."""
    content = json.dumps(envelope(fields)).encode()
    return f"/{name}", content, {"Content-Type": "application/json", "X-Signature": sign(content, secret)}


def debit_fields(transaction_id, player="p1", amount="10.00", currency="EUR", kind="stake", round=1,
                 table="CLASSIC-1", bets=(1,)):
    return {"transaction_id": transaction_id, "player": player, "currency": currency, "amount": amount,
            "round": round, "table": table, "kind": kind, "bets": list(bets)}


def credit_fields(transaction_id, player="p1", amount="10.00", kind="payout", **more):
    return debit_fields(transaction_id, player, amount, kind=kind, **more)


def rollback_fields(transaction_id, reference, player="p1", currency="EUR", round=1):
    return {"transaction_id": transaction_id, "reference_transaction_id": reference, "player": player,
            "currency": currency, "round": round}


class Platform:
    """The platform's side of the protocol against the wallet at ``url`` (an ``httpx.Client``
    with keep-alive; ``timeout`` seconds per call unless a call says otherwise)."""

    def __init__(self, url, timeout=5.0):
        self.url = url
        self.http = httpx.Client(base_url=url, timeout=timeout)

    def close(self):
        self.http.close()

    def post(self, name, fields, secret=SECRET, timeout=None):
        path, content, headers = signed(name, fields, secret)
        return self.http.post(path, content=content, headers=headers,
                              **({"timeout": timeout} if timeout is not None else {}))

    def answer(self, name, fields, **options):
        """The JSON answer of a call that must be answered HTTP 200."""
        response = self.post(name, fields, **options)
        assert response.status_code == 200, (response.status_code, response.text)
        return response.json()

    def balance(self, player="p1", currency="EUR"):
        return self.answer("balance", {"player": player, "currency": currency})

    def debit(self, transaction_id, **fields):
        return self.answer("debit", debit_fields(transaction_id, **fields))

    def credit(self, transaction_id, **fields):
        return self.answer("credit", credit_fields(transaction_id, **fields))

    def rollback(self, transaction_id, reference, **fields):
        return self.answer("rollback", rollback_fields(transaction_id, reference, **fields))

    # -- the sandbox's admin endpoints ----------------------------------------------------------

    def state(self):
        return self._admin("GET", "state")

    def balance_of(self, player="p1", currency="EUR"):
        """The player's balance as ``/_admin/state`` shows it (no call counted)."""
        return self.state()["players"][player]["balances"][currency]

    def faults(self, **changes):
        return self._admin("POST", "faults", changes)

    def set_player(self, **fields):
        return self._admin("POST", "players", fields)

    def reset(self):
        return self._admin("POST", "reset")

    def _admin(self, method, path, data=None):
        response = self.http.request(method, f"/_admin/{path}", **({"json": data} if data is not None else {}))
        assert response.status_code == 200, (response.status_code, response.text)
        return response.json()
