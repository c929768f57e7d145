"""The calls of docs/wallet-api.md against a real wallet process: signatures, each call's happy
path, money in minor units, and the bodies refused as not a call (HTTP 400)."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.operator_wallet.sandbox import SECRET, Platform, credit_fields, debit_fields, envelope, rollback_fields, sign


def test_a_bad_signature_is_refused_with_401_and_moves_nothing(wallet):
    response = wallet.post("debit", debit_fields("s:1"), secret="not-the-secret")
    assert response.status_code == 401
    content = json.dumps(envelope(debit_fields("s:1"))).encode()
    headers = {"Content-Type": "application/json"}
    assert wallet.http.post("/debit", content=content, headers=headers).status_code == 401  # no signature
    tampered, headers["X-Signature"] = content.replace(b'"10.00"', b'"11.00"'), sign(content)
    assert wallet.http.post("/debit", content=tampered, headers=headers).status_code == 401
    state = wallet.state()
    assert state["transactions"] == {} and state["counters"]["bad_signatures"] == 3


def test_the_signature_is_the_hex_hmac_sha256_of_the_raw_body(wallet):
    content = json.dumps(envelope({"player": "p1", "currency": "EUR"}), indent=2).encode()  # any bytes signed
    for signature in (sign(content, SECRET), sign(content, SECRET).upper()):
        response = wallet.http.post("/balance", content=content,
                                    headers={"Content-Type": "application/json", "X-Signature": signature})
        assert response.status_code == 200 and response.json() == {"status": "OK", "balance": "1000.00"}


def test_balance_opens_a_new_player_at_the_initial_balance_and_moves_nothing(wallet):
    assert wallet.balance("new-player", "USD") == {"status": "OK", "balance": "1000.00"}
    assert wallet.balance("new-player", "USD") == {"status": "OK", "balance": "1000.00"}
    assert wallet.state()["players"]["new-player"] == {"blocked": False, "balances": {"USD": "1000.00"}}


def test_debit_takes_and_credit_gives(wallet):
    assert wallet.debit("i1:stake:1", amount="12.50") == {"status": "OK", "balance": "987.50",
                                                           "transaction_id": "i1:stake:1"}
    assert wallet.credit("i1:payout:1:p1", amount="25.00") == {"status": "OK", "balance": "1012.50",
                                                                "transaction_id": "i1:payout:1:p1"}
    transaction = wallet.state()["transactions"]["i1:stake:1"]
    assert transaction == {"call": "debit", **debit_fields("i1:stake:1", amount="12.50"), "rolled_back_by": None,
                           "answer": {"status": "OK", "balance": "987.50", "transaction_id": "i1:stake:1"}}


def test_a_zero_payout_is_accepted_and_recorded(wallet):
    """Every bet lost: the round's payout credit is 0.00, and it closes the round for the player."""
    wallet.debit("i1:stake:7", amount="5.00", round=7)
    assert wallet.credit("i1:payout:7:p1", amount="0.00", round=7)["balance"] == "995.00"
    assert wallet.state()["transactions"]["i1:payout:7:p1"]["amount"] == "0.00"


def test_every_kind_of_each_call_is_accepted(wallet):
    for n, kind in enumerate(["stake", "double", "split", "insurance", "follow_double", "follow_split", "correction"]):
        assert wallet.debit(f"d{n}", kind=kind, amount="1.00")["status"] == "OK"
    for n, kind in enumerate(["payout", "refund", "resettle", "adjustment"]):
        assert wallet.credit(f"c{n}", kind=kind, amount="1.00")["status"] == "OK"
    assert wallet.balance() == {"status": "OK", "balance": "997.00"}


def test_genuine_insufficient_funds(wallet):
    wallet.set_player(player="p1", currency="EUR", balance="5.00")
    assert wallet.debit("s:1", amount="5.01") == {"status": "INSUFFICIENT_FUNDS", "balance": "5.00",
                                                   "transaction_id": "s:1"}
    assert wallet.debit("s:2", amount="5.00")["balance"] == "0.00"
    assert list(wallet.state()["transactions"]) == ["s:2"]


def test_a_refused_debit_is_not_recorded_and_may_come_again(wallet):
    """Only movements are remembered: the same debit, once the player can cover it, is applied."""
    wallet.set_player(player="p1", currency="EUR", balance="1.00")
    assert wallet.debit("corr:1", kind="correction", amount="3.00")["status"] == "INSUFFICIENT_FUNDS"
    wallet.credit("adj:1", kind="adjustment", amount="2.00")
    assert wallet.debit("corr:1", kind="correction", amount="3.00") == {"status": "OK", "balance": "0.00",
                                                                         "transaction_id": "corr:1"}


def test_currencies_keep_their_own_minor_units(start_wallet):
    _, wallet = start_wallet("--currency-units", "EUR=2,JPY=0,BTC=8", "--initial-balance", "500")
    assert wallet.balance("p1", "JPY")["balance"] == "500"
    assert wallet.balance("p1", "BTC")["balance"] == "500.00000000"
    assert wallet.debit("s:1", currency="JPY", amount="120")["balance"] == "380"
    assert wallet.debit("s:2", currency="BTC", amount="0.00000001")["balance"] == "499.99999999"
    assert wallet.post("debit", debit_fields("s:3", currency="JPY", amount="120.00")).status_code == 400


@pytest.mark.parametrize("change, why", [
    ({"amount": 10}, "amount"),
    ({"amount": "10.5"}, "amount"),
    ({"amount": "10.500"}, "amount"),
    ({"amount": "-10.00"}, "amount"),
    ({"amount": "010.00"}, "amount"),
    ({"amount": "1e1"}, "amount"),
    ({"amount": "0.00"}, "above zero"),
    ({"currency": "GBP"}, "currency"),
    ({"kind": "payout"}, "kind"),
    ({"kind": ["stake"]}, "kind"),
    ({"currency": ["EUR"]}, "currency"),
    ({"player": ""}, "player"),
    ({"transaction_id": 7}, "transaction_id"),
    ({"bets": "1,2"}, "bets"),
    ({"bets": [True]}, "bets"),
    ({"round": 1.5}, "round"),
    ({"extra": 1}, "unknown"),
])
def test_a_malformed_debit_is_refused_with_400(wallet, change, why):
    response = wallet.post("debit", {**debit_fields("s:1"), **change})
    assert response.status_code == 400 and why in response.json()["error"]
    assert wallet.state()["transactions"] == {}


@pytest.mark.parametrize("name, fields, why", [
    ("credit", credit_fields("c:1", kind="stake"), "kind"),
    ("credit", credit_fields("c:1", amount="-1.00"), "amount"),
    ("rollback", {**rollback_fields("r:1", "s:1"), "amount": "1.00"}, "unknown"),
    ("rollback", rollback_fields("s:1", "s:1"), "differ"),
    ("balance", {"player": "p1"}, "missing"),
])
def test_other_malformed_calls_are_refused_with_400(wallet, name, fields, why):
    response = wallet.post(name, fields)
    assert response.status_code == 400 and why in response.json()["error"]


@pytest.mark.parametrize("envelope_change", [
    {"request_id": "not-a-uuid"}, {"sent_at": "yesterday"}, {"sent_at": "2026-12-01T10:00:00"},
    {"sent_at": "2026-12-01T10:00:00+01:00"},
])
def test_the_envelope_is_checked(wallet, envelope_change):
    content = json.dumps({**envelope(debit_fields("s:1")), **envelope_change}).encode()
    response = wallet.http.post("/debit", content=content,
                                headers={"Content-Type": "application/json", "X-Signature": sign(content)})
    assert response.status_code == 400


def test_a_body_that_is_not_json_or_not_declared_json_is_refused_with_400(wallet):
    for content, content_type in ((b"{not json", "application/json"), (b"[1]", "application/json"),
                                  (json.dumps(envelope(debit_fields("s:1"))).encode(), "text/plain")):
        response = wallet.http.post("/debit", content=content,
                                    headers={"Content-Type": content_type, "X-Signature": sign(content)})
        assert response.status_code == 400
    assert wallet.state()["counters"]["invalid"] == 3


def _signed_post(wallet, name, content):
    return wallet.http.post(f"/{name}", content=content,
                            headers={"Content-Type": "application/json", "X-Signature": sign(content)})


def test_a_deeply_nested_body_is_refused_with_400(wallet):
    for content in (b"[" * 50_000, b'{"a": ' * 50_000):
        response = _signed_post(wallet, "debit", content)
        assert response.status_code == 400 and "JSON" in response.json()["error"]
    assert wallet.state()["counters"]["invalid"] == 2


def test_a_repeated_key_is_refused_with_400_and_moves_nothing(wallet):
    body = json.dumps(envelope(debit_fields("s:1", amount="1.00")))
    content = (body[:-1] + ', "amount": "999.00"}').encode()
    response = _signed_post(wallet, "debit", content)
    assert response.status_code == 400 and "amount" in response.json()["error"]
    assert wallet.state()["transactions"] == {}


@pytest.mark.parametrize("change", [{"transaction_id": "s:\x001"}, {"player": "p1\x00"}, {"bets": ["b\x00"]},
                                    {"round": "r\x00"}, {"table": "\x00"}])
def test_an_id_holding_a_nul_is_refused_with_400(wallet, change):
    response = wallet.post("debit", {**debit_fields("s:1"), **change})
    assert response.status_code == 400 and "NUL" in response.json()["error"]
    assert wallet.state()["transactions"] == {}


def test_a_rollback_naming_a_debit_with_a_nul_is_refused_with_400(wallet):
    response = wallet.post("rollback", rollback_fields("r:1", "s:\x001"))
    assert response.status_code == 400 and "NUL" in response.json()["error"]


def test_sent_at_may_be_written_with_z(wallet):
    content = json.dumps({**envelope({"player": "p1", "currency": "EUR"}), "sent_at": "2026-12-01T10:00:00Z"}).encode()
    response = wallet.http.post("/balance", content=content,
                                headers={"Content-Type": "application/json", "X-Signature": sign(content)})
    assert response.status_code == 200


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
                           | st.sampled_from(["EUR", "10.00", "0.00", "stake", "payout", "p1", "s:1"]),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                      max_size=3), max_leaves=6)


@pytest.fixture(scope="module")
def platform(shared_sandbox):
    platform = Platform(shared_sandbox.url)
    yield platform
    platform.close()


VALID = {"balance": {"player": "p1", "currency": "EUR"}, "debit": debit_fields("s:1"),
         "credit": credit_fields("c:1"), "rollback": rollback_fields("r:1", "s:1")}


@settings(max_examples=200, deadline=None, database=None)
@given(name=st.sampled_from(sorted(VALID)), changes=st.dictionaries(
    st.sampled_from(["transaction_id", "reference_transaction_id", "player", "currency", "amount", "round", "table",
                     "kind", "bets", "other"]), JSON_VALUES, min_size=1, max_size=2))
def test_any_body_is_answered_200_or_400_never_a_server_error(platform, name, changes):
    """A valid call with one or two fields replaced (or added) by any JSON value."""
    assert platform.post(name, {**VALID[name], **changes}).status_code in (200, 400)
