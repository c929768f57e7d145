"""wallets.client.send_many against the reference wallet process: at most the operator's
``wallet_concurrency`` calls in flight, every answer read, a wrong secret an unknown outcome."""

import http.server
import threading
import uuid
from datetime import timedelta

import pytest

from accounts.models import Operator
from tests.operator_wallet.sandbox import SECRET, Sandbox, debit_fields, free_port
from wallets.client import MAX_ANSWER_BYTES, send_many


@pytest.fixture(scope="module")
def wallet(tmp_path_factory):
    sandbox = Sandbox("--latency-ms", "40", log_dir=tmp_path_factory.mktemp("wallet"))
    yield sandbox
    sandbox.stop()


def debits(n):
    return [("debit", debit_fields(f"t-{uuid.uuid4()}", player=f"p{i}")) for i in range(n)]


def overlapping(answers):
    """How many pairs of consecutive attempts (by send time) were in flight at once."""
    spans = sorted((a.sent_at, a.sent_at + timedelta(milliseconds=a.duration_ms)) for a in answers)
    return sum(later[0] < earlier[1] for earlier, later in zip(spans, spans[1:]))


@pytest.mark.parametrize("concurrency", [1, 4])
def test_calls_in_flight_are_bounded_by_the_operators_concurrency(wallet, concurrency):
    operator = Operator(code="sea", wallet_url=wallet.url, wallet_secret=SECRET, wallet_timeout_ms=3000,
                        wallet_concurrency=concurrency)
    answers = send_many(operator, debits(8))
    assert [a.outcome for a in answers] == ["ok"] * 8
    assert (overlapping(answers) > 0) == (concurrency > 1)


def test_a_wrong_secret_is_an_unknown_outcome_with_its_reason(wallet):
    operator = Operator(code="sea", wallet_url=wallet.url, wallet_secret="wrong", wallet_timeout_ms=3000)
    [answer] = send_many(operator, debits(1))
    assert (answer.outcome, answer.http_status, answer.error) == ("unknown", 401, "HTTP 401")


#: OK answers whose ``balance`` is no money string (docs/wallet-api.md section 1), by mode.
BAD_BALANCES = {"no-balance": b'{"status": "OK"}', "exponent": b'{"status": "OK", "balance": "1e3"}',
                "number": b'{"status": "OK", "balance": 1000.0}', "integer": b'{"status": "OK", "balance": 1000}',
                "nan": b'{"status": "OK", "balance": NaN}', "null": b'{"status": "OK", "balance": null}',
                "too-large": b'{"status": "OK", "balance": "100000000000.00"}',
                "too-fine": b'{"status": "OK", "balance": "1.00001"}'}

#: Answers holding a string no text column of PostgreSQL stores (NUL, a lone UTF-16 surrogate), by mode.
UNSTORABLE = {"nul": b'{"status": "OK", "balance": "5.00", "note": "a\\u0000b"}',
              "nul-key": b'{"status": "OK", "balance": "5.00", "a\\u0000": 1}',
              "nul-status": b'{"status": "OK\\u0000", "balance": "5.00"}',
              "surrogate": b'{"status": "OK", "balance": "5.00", "note": ["\\udfff"]}',
              "raw-surrogate": b'{"status": "OK", "balance": "5.00", "note": "\xed\xa0\x80"}',
              "raw-nul": b'{"status": "OK", "balance": "5.00"}\x00'}


class _Hostile(http.server.BaseHTTPRequestHandler):
    """An operator's wallet that answers badly, by the path's first part: ``redirect`` (307 to
    ``/landed``, which counts its hits), ``nested`` (JSON 100,000 arrays deep), ``big`` (a valid
    answer longer than the cap), ``repeated`` (``status`` twice, OK last), ``utf16`` (a valid answer
    in UTF-16: the protocol's JSON is UTF-8), an OK whose balance is
    no money string (``BAD_BALANCES``), and one no database could keep (``UNSTORABLE``)."""

    landed = []

    def _answer(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        mode = self.path.strip("/").split("/")[0]
        if mode == "landed":
            _Hostile.landed.append(self.command)
            body = b'{"status": "OK", "balance": "1.00"}'
        elif mode == "redirect":
            self.send_response(307)
            self.send_header("Location", f"http://localhost:{self.server.server_port}/landed/debit")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        else:
            body = {"nested": b"[" * 100_000 + b"]" * 100_000,
                    "big": b'{"status": "OK", "pad": "' + b"x" * (MAX_ANSWER_BYTES + 10) + b'"}',
                    "repeated": b'{"status": "INSUFFICIENT_FUNDS", "status": "OK"}',
                    "utf16": '{"status": "OK", "balance": "5.00"}'.encode("utf-16"), **BAD_BALANCES,
                    **UNSTORABLE}[mode]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def hostile():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Hostile)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.mark.parametrize("mode, why", [("redirect", "HTTP 307"), ("nested", "not JSON"),
                                       ("big", f"longer than {MAX_ANSWER_BYTES} bytes"), ("repeated", "repeated"),
                                       ("utf16", "not JSON")])
def test_a_redirect_or_a_body_no_json_reader_should_trust_is_an_unknown_outcome(hostile, mode, why):
    """A signed call goes to the operator's wallet_url only (a redirect is not followed: it could
    point anywhere), and an answer too deep, too long or with a key twice is no answer."""
    _Hostile.landed.clear()
    operator = Operator(code="sea", wallet_url=f"{hostile}/{mode}", wallet_secret=SECRET, wallet_timeout_ms=3000)
    (answer,) = send_many(operator, debits(1))
    assert (answer.outcome, answer.status) == ("unknown", None) and why in answer.error, answer.error
    assert _Hostile.landed == []
    assert len(str(answer.body or "")) <= 2000


@pytest.mark.parametrize("mode", sorted(UNSTORABLE))
def test_an_answer_holding_a_nul_or_a_lone_surrogate_is_an_unknown_outcome_kept_as_text(hostile, mode):
    """The journal keeps every answer, and PostgreSQL stores no NUL and no lone surrogate: such an
    answer is no answer, kept as its text with those characters replaced."""
    operator = Operator(code="sea", wallet_url=f"{hostile}/{mode}", wallet_secret=SECRET, wallet_timeout_ms=3000)
    (answer,) = send_many(operator, debits(1))
    assert (answer.outcome, answer.status) == ("unknown", None) and answer.error, answer.error
    assert isinstance(answer.body, str) and "\x00" not in answer.body
    answer.body.encode()  # no lone surrogate


@pytest.mark.parametrize("mode", sorted(BAD_BALANCES))
@pytest.mark.parametrize("call", ["debit", "credit", "rollback"])
def test_an_ok_without_a_money_string_balance_is_an_unknown_outcome(hostile, mode, call):
    """An OK answer to a money call does not follow the protocol unless it carries the balance
    after the call as a money string: it is no answer (a stake is rolled back, a credit or
    rollback sent again). A balance call's balance is read in its currency (test_balances)."""
    operator = Operator(code="sea", wallet_url=f"{hostile}/{mode}", wallet_secret=SECRET, wallet_timeout_ms=3000)
    (answer,) = send_many(operator, [(call, debit_fields(f"t-{uuid.uuid4()}"))])
    assert (answer.outcome, answer.status) == ("unknown", None) and "balance" in answer.error, answer.error


def test_an_ok_with_a_money_string_balance_is_known(hostile):
    operator = Operator(code="sea", wallet_url=f"{hostile}/landed", wallet_secret=SECRET, wallet_timeout_ms=3000)
    (answer,) = send_many(operator, debits(1))
    assert (answer.outcome, answer.status, answer.error) == ("ok", "OK", "")
