"""The sandbox's admin endpoints (docs/wallet-api.md, "The reference wallet"): unsigned, on the
wallet's port, never subject to the faults."""

import pytest

from tests.operator_wallet.sandbox import debit_fields


def test_players_sets_a_balance_and_a_block(wallet):
    assert wallet.set_player(player="ann", currency="USD", balance="12.34") == {
        "blocked": False, "balances": {"USD": "12.34"}}
    assert wallet.set_player(player="ann", blocked=True) == {"blocked": True, "balances": {"USD": "12.34"}}
    assert wallet.debit("s:1", player="ann", currency="USD", amount="1.00")["status"] == "PLAYER_BLOCKED"
    assert wallet.balance("ann", "EUR")["balance"] == "1000.00"  # another currency opens as usual
    wallet.set_player(player="ann", blocked=False)
    assert wallet.debit("s:1", player="ann", currency="USD", amount="1.00")["balance"] == "11.34"


@pytest.mark.parametrize("fields", [
    {"player": "ann", "currency": "USD", "balance": "12.3"}, {"player": "ann", "balance": "12.30"},
    {"player": "ann", "currency": "GBP", "balance": "1.00"}, {"player": "ann", "blocked": "yes"},
    {"player": "", "blocked": True}, {"blocked": True}, {"player": "ann", "colour": "red"},
])
def test_players_refuses_malformed_changes(wallet, fields):
    response = wallet.http.post("/_admin/players", json=fields)
    assert response.status_code == 400 and response.json()["error"]
    assert wallet.state()["players"] == {}


def test_the_state_counts_calls_and_refusals(wallet):
    wallet.balance()
    wallet.debit("s:1")
    wallet.debit("s:1")
    wallet.debit("s:1", amount="2.00")
    wallet.credit("c:1")
    wallet.rollback("r:1", "s:9")
    wallet.post("debit", debit_fields("s:2"), secret="wrong")
    wallet.post("debit", {"nonsense": True})
    counters = wallet.state()["counters"]
    assert counters["calls"] == {"balance": 1, "debit": 5, "credit": 1, "rollback": 1}
    assert {key: counters[key] for key in ("bad_signatures", "invalid", "replays", "duplicates", "applied_twice")} == {
        "bad_signatures": 1, "invalid": 1, "replays": 1, "duplicates": 1, "applied_twice": 0}
    assert set(counters["faults"]) == {"down", "latency", "error_before", "drop", "late_debit", "timeout",
                                       "error_after", "insufficient", "blocked", "limit"}


def test_reset_forgets_everything(wallet):
    wallet.debit("s:1")
    wallet.rollback("r:2", "s:2")
    wallet.faults(down=True)
    state = wallet.reset()
    assert (state["players"], state["transactions"], state["tombstones"]) == ({}, {}, {})
    assert state["counters"]["calls"]["debit"] == 0 and state["faults"]["down"] is False
    assert wallet.debit("s:1")["balance"] == "990.00"  # the id is new again
