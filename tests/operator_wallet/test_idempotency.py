"""The operator's promises of docs/wallet-api.md: a known transaction id answers its first answer
again or DUPLICATE_TRANSACTION; tombstones; rollbacks return a debit's amount, once; credits and
rollbacks are accepted for a blocked player."""

from tests.operator_wallet.sandbox import debit_fields


def test_a_repeated_call_answers_its_first_answer_and_moves_nothing(wallet):
    first = wallet.debit("i1:stake:1", amount="10.00")
    wallet.credit("i1:payout:9:p1", amount="3.00", round=9)  # the balance moves on
    assert wallet.debit("i1:stake:1", amount="10.00") == first == {"status": "OK", "balance": "990.00",
                                                                   "transaction_id": "i1:stake:1"}
    credit = wallet.credit("i1:payout:9:p1", amount="3.00", round=9)
    assert credit == {"status": "OK", "balance": "993.00", "transaction_id": "i1:payout:9:p1"}
    state = wallet.state()
    assert state["players"]["p1"]["balances"]["EUR"] == "993.00"
    assert state["counters"]["replays"] == 2 and state["counters"]["applied_twice"] == 0


def test_the_same_id_with_another_body_is_a_duplicate(wallet):
    wallet.debit("i1:stake:1", amount="10.00")
    for change in ({"amount": "11.00"}, {"bets": [1, 2]}, {"player": "p2"}, {"kind": "double"}):
        assert wallet.debit("i1:stake:1", **{"amount": "10.00", **change})["status"] == "DUPLICATE_TRANSACTION"
    assert wallet.credit("i1:stake:1", amount="10.00")["status"] == "DUPLICATE_TRANSACTION"  # another call
    answer = wallet.rollback("i1:stake:1", "i1:stake:0")
    assert answer == {"status": "DUPLICATE_TRANSACTION", "balance": "990.00", "transaction_id": "i1:stake:1"}
    state = wallet.state()
    assert state["counters"]["duplicates"] == 6 and state["players"]["p1"]["balances"]["EUR"] == "990.00"
    assert state["players"]["p2"]["balances"]["EUR"] == "1000.00"


def test_a_rollback_of_an_applied_debit_returns_its_amount_once(wallet):
    wallet.debit("i1:stake:1", amount="25.00")
    first = wallet.rollback("i1:rollback:stake:1", "i1:stake:1")
    assert first == {"status": "OK", "balance": "1000.00", "transaction_id": "i1:rollback:stake:1"}
    wallet.debit("i1:stake:2", amount="1.00")
    assert wallet.rollback("i1:rollback:stake:1", "i1:stake:1") == first  # idempotent by its own id
    other = wallet.rollback("i1:rollback:stake:1:again", "i1:stake:1")  # another rollback of the same debit
    assert other == {"status": "OK", "balance": "999.00", "transaction_id": "i1:rollback:stake:1:again"}
    state = wallet.state()
    assert state["players"]["p1"]["balances"]["EUR"] == "999.00"
    assert state["transactions"]["i1:stake:1"]["rolled_back_by"] == "i1:rollback:stake:1"
    assert state["transactions"]["i1:rollback:stake:1"]["amount"] == "25.00"
    assert state["transactions"]["i1:rollback:stake:1:again"]["amount"] == "0.00"
    assert state["tombstones"] == {}


def test_a_rolled_back_debit_that_comes_again_is_answered_rolled_back(wallet):
    wallet.debit("i1:stake:1", amount="25.00")
    wallet.rollback("i1:rollback:stake:1", "i1:stake:1")
    assert wallet.debit("i1:stake:1", amount="25.00")["status"] == "ROLLED_BACK"
    assert wallet.balance()["balance"] == "1000.00"


def test_a_rollback_of_an_unseen_debit_leaves_a_tombstone_and_the_late_debit_is_not_applied(wallet):
    answer = wallet.rollback("i1:rollback:stake:5", "i1:stake:5", round=5)
    assert answer == {"status": "UNKNOWN_TRANSACTION", "balance": "1000.00", "transaction_id": "i1:rollback:stake:5"}
    assert wallet.rollback("i1:rollback:stake:5", "i1:stake:5", round=5) == answer  # idempotent
    late = wallet.debit("i1:stake:5", amount="10.00", round=5)
    assert late == {"status": "ROLLED_BACK", "balance": "1000.00", "transaction_id": "i1:stake:5"}
    state = wallet.state()
    assert state["tombstones"] == {"i1:stake:5": {"rollback_transaction_id": "i1:rollback:stake:5",
                                                  "player": "p1", "currency": "EUR", "round": 5}}
    assert "i1:stake:5" not in state["transactions"] and state["counters"]["rolled_back"] == 1
    assert state["players"]["p1"]["balances"]["EUR"] == "1000.00"
    assert wallet.credit("i1:stake:5", amount="10.00")["status"] == "DUPLICATE_TRANSACTION"  # the id is taken


def test_a_rollback_names_a_debit_of_its_player_currency_and_round(wallet):
    wallet.debit("i1:stake:1", amount="10.00", round=3)
    wallet.credit("i1:payout:3:p1", amount="20.00", round=3)
    for fields, why in (({"player": "p2", "round": 3}, "player"), ({"round": 4}, "round"),
                        ({"currency": "USD", "round": 3}, "currency")):
        response = wallet.post("rollback", {"transaction_id": "r:1", "reference_transaction_id": "i1:stake:1",
                                            "player": "p1", "currency": "EUR", **fields})
        assert response.status_code == 400 and why in response.json()["error"]
    response = wallet.post("rollback", {"transaction_id": "r:2", "reference_transaction_id": "i1:payout:3:p1",
                                        "player": "p1", "currency": "EUR", "round": 3})
    assert response.status_code == 400 and "not a debit" in response.json()["error"]
    state = wallet.state()
    assert state["players"]["p1"]["balances"]["EUR"] == "1010.00" and "r:1" not in state["transactions"]


def test_credits_and_rollbacks_are_accepted_for_a_blocked_player(wallet):
    wallet.debit("i1:stake:1", amount="10.00")
    wallet.set_player(player="p1", blocked=True)
    assert wallet.debit("i1:stake:2", amount="10.00")["status"] == "PLAYER_BLOCKED"
    assert wallet.debit("i1:stake:1", amount="10.00")["status"] == "OK"  # a replay is still its first answer
    assert wallet.credit("i1:payout:1:p1", amount="30.00")["balance"] == "1020.00"
    assert wallet.rollback("i1:rollback:stake:1", "i1:stake:1")["balance"] == "1030.00"
    assert wallet.rollback("i1:rollback:stake:2", "i1:stake:2")["status"] == "UNKNOWN_TRANSACTION"


def test_a_refused_debit_rolled_back_stays_refused(wallet):
    wallet.set_player(player="p1", currency="EUR", balance="1.00")
    assert wallet.debit("i1:stake:1", amount="10.00")["status"] == "INSUFFICIENT_FUNDS"
    assert wallet.rollback("i1:rollback:stake:1", "i1:stake:1")["status"] == "UNKNOWN_TRANSACTION"
    wallet.set_player(player="p1", currency="EUR", balance="100.00")
    assert wallet.debit("i1:stake:1", amount="10.00")["status"] == "ROLLED_BACK"


def test_the_envelope_is_not_part_of_the_body_compared(wallet):
    """Each attempt has its own request_id and sent_at: a retry is still the same call."""
    responses = [wallet.post("credit", debit_fields("i1:payout:1:p1", kind="payout")) for _ in range(3)]
    assert len({r.content for r in responses}) == 1
    assert wallet.state()["counters"]["replays"] == 2
