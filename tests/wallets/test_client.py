"""wallets.client.send_many against the reference wallet process: at most the operator's
``wallet_concurrency`` calls in flight, every answer read, a wrong secret an unknown outcome."""

import uuid
from datetime import timedelta

import pytest

from accounts.models import Operator
from tests.operator_wallet.sandbox import SECRET, Sandbox, debit_fields
from wallets.client import send_many


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
