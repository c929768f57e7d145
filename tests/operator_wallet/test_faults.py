"""Each fault of the sandbox (docs/wallet-api.md, "The reference wallet"), observed from the
platform's side and in ``/_admin/state``."""

import time

import httpx
import pytest

from tests.operator_wallet.sandbox import debit_fields, rollback_fields


def applied(wallet, transaction_id):
    return transaction_id in wallet.state()["transactions"]


def test_latency_delays_the_money_calls(wallet):
    wallet.faults(latency_ms=300, jitter_ms=100)
    start = time.monotonic()
    wallet.debit("s:1")
    assert 0.3 <= time.monotonic() - start
    start = time.monotonic()
    wallet.balance()
    assert time.monotonic() - start < 0.3
    assert wallet.state()["counters"]["faults"]["latency"] == 1


def test_timeout_applies_the_call_and_answers_after_the_client_gave_up(wallet):
    wallet.faults(timeout_rate=1, timeout_ms=2000)
    with pytest.raises(httpx.ReadTimeout):
        wallet.post("credit", debit_fields("i1:payout:1:p1", kind="payout"), timeout=0.3)
    state = wallet.state()
    assert applied(wallet, "i1:payout:1:p1") and state["players"]["p1"]["balances"]["EUR"] == "1010.00"
    assert state["counters"]["faults"]["timeout"] == 1
    wallet.faults(timeout_rate=0)
    assert wallet.credit("i1:payout:1:p1") == state["transactions"]["i1:payout:1:p1"]["answer"]  # the retry


def test_error_after_applies_the_call_then_answers_500(wallet):
    wallet.faults(error_after_rate=1)
    assert wallet.post("debit", debit_fields("s:1")).status_code == 500
    assert applied(wallet, "s:1") and wallet.balance_of() == "990.00"
    assert wallet.state()["counters"]["faults"]["error_after"] == 1


def test_error_before_answers_503_without_applying(wallet):
    wallet.faults(error_before_rate=1)
    assert wallet.post("debit", debit_fields("s:1")).status_code == 503
    assert wallet.post("rollback", rollback_fields("r:1", "s:1")).status_code == 503
    state = wallet.state()
    assert state["transactions"] == {} and state["tombstones"] == {}
    assert state["counters"]["faults"]["error_before"] == 2


@pytest.mark.parametrize("drop_applies", [False, True])
def test_drop_closes_the_connection_without_an_answer(wallet, drop_applies):
    wallet.faults(drop_rate=1, drop_applies=drop_applies)
    with pytest.raises(httpx.RemoteProtocolError):
        wallet.post("debit", debit_fields("s:1"))
    assert applied(wallet, "s:1") is drop_applies
    assert wallet.balance()["balance"] == ("990.00" if drop_applies else "1000.00")
    assert wallet.state()["counters"]["faults"]["drop"] == 1


def test_a_late_debit_overtaken_by_its_rollback_meets_the_tombstone(wallet):
    wallet.faults(late_debit_rate=1, late_debit_ms=1000)
    with pytest.raises(httpx.ReadTimeout):  # the platform's timeout...
        wallet.post("debit", debit_fields("i1:stake:1"), timeout=0.3)
    assert wallet.rollback("i1:rollback:stake:1", "i1:stake:1")["status"] == "UNKNOWN_TRANSACTION"  # ...its rollback
    deadline = time.monotonic() + 5
    while wallet.state()["counters"]["rolled_back"] == 0:  # the held debit is processed at last
        assert time.monotonic() < deadline, "the late debit was never processed"
        time.sleep(0.05)
    state = wallet.state()
    assert not applied(wallet, "i1:stake:1") and state["players"]["p1"]["balances"]["EUR"] == "1000.00"
    assert state["counters"]["faults"]["late_debit"] == 1


def test_a_late_debit_not_overtaken_is_applied_late(wallet):
    wallet.faults(late_debit_rate=1, late_debit_ms=400)
    start = time.monotonic()
    assert wallet.debit("i1:stake:1")["status"] == "OK"
    assert time.monotonic() - start >= 0.4
    assert wallet.post("credit", debit_fields("c:1", kind="payout")).elapsed.total_seconds() < 0.4  # debits only


def test_insufficient_refuses_debits_whatever_the_balance(wallet):
    wallet.faults(insufficient_rate=1)
    assert wallet.debit("s:1", amount="0.01") == {"status": "INSUFFICIENT_FUNDS", "balance": "1000.00",
                                                   "transaction_id": "s:1"}
    assert wallet.credit("c:1")["status"] == "OK"
    assert wallet.rollback("r:1", "s:1")["status"] == "UNKNOWN_TRANSACTION"
    assert wallet.state()["counters"]["faults"]["insufficient"] == 1


def test_blocked_and_limited_players(wallet):
    wallet.faults(blocked_players=["bob"], limit_players=["lim"])
    assert wallet.debit("s:1", player="bob")["status"] == "PLAYER_BLOCKED"
    assert wallet.debit("s:2", player="lim")["status"] == "LIMIT_EXCEEDED"
    assert wallet.debit("s:3", player="ann")["status"] == "OK"
    assert wallet.credit("c:1", player="bob")["balance"] == "1010.00"  # credits always accepted
    assert wallet.credit("c:2", player="lim")["balance"] == "1010.00"
    counters = wallet.state()["counters"]["faults"]
    assert (counters["blocked"], counters["limit"]) == (1, 1)


def test_down_refuses_every_protocol_call_but_not_the_admin(wallet):
    wallet.faults(down=True)
    assert wallet.post("balance", {"player": "p1", "currency": "EUR"}).status_code == 503
    assert wallet.post("credit", debit_fields("c:1", kind="payout")).status_code == 503
    state = wallet.state()
    assert state["transactions"] == {} and state["counters"]["faults"]["down"] == 2
    wallet.faults(down=False)
    assert wallet.balance()["status"] == "OK"


def test_faults_touch_neither_balance_calls_nor_the_admin(wallet):
    wallet.faults(error_before_rate=1, drop_rate=1, timeout_rate=1, latency_ms=500)
    start = time.monotonic()
    assert wallet.balance()["status"] == "OK"
    wallet.state()
    assert time.monotonic() - start < 0.5


def test_the_seed_repeats_the_faults(wallet):
    def run():
        wallet.reset()
        wallet.faults(error_before_rate=0.5, seed=42)
        return [wallet.post("debit", debit_fields(f"s:{n}", amount="1.00")).status_code for n in range(30)]

    first = run()
    assert first == run() and set(first) == {200, 503}


def test_faults_from_the_command_line_change_at_runtime_and_come_back_on_reset(start_wallet):
    _, wallet = start_wallet("--error-before-rate", "1", "--blocked-players", "bob,eve", "--timeout-ms", "50")
    faults = wallet.state()["faults"]
    assert faults["error_before_rate"] == 1 and faults["blocked_players"] == ["bob", "eve"]
    assert faults["timeout_ms"] == 50
    assert wallet.post("debit", debit_fields("s:1")).status_code == 503
    assert wallet.faults(error_before_rate=0)["error_before_rate"] == 0
    assert wallet.debit("s:1", player="eve")["status"] == "PLAYER_BLOCKED"
    assert wallet.debit("s:2")["status"] == "OK"
    assert wallet.reset()["faults"] == faults


@pytest.mark.parametrize("changes", [
    {"nonsense_rate": 0.1}, {"timeout_rate": 1.5}, {"drop_rate": "0.1"}, {"latency_ms": -1},
    {"latency_ms": 1.5}, {"down": 1}, {"blocked_players": "bob"}, {"seed": "x"},
])
def test_malformed_faults_are_refused(wallet, changes):
    response = wallet.http.post("/_admin/faults", json=changes)
    assert response.status_code == 400 and response.json()["error"]
    assert wallet.state()["faults"]["timeout_rate"] == 0
