"""Every bad request to the operator API answers a 4xx JSON error with a stable code and writes
nothing but its audit row: missing, extra, repeated and mistyped fields, floats for amounts, bad
codes, unknown currencies, a seamless operator's transfer, bad cursors, repeated or unknown query
parameters, NUL bytes, huge bodies."""

import json

import pytest

from accounts.models import OperatorAPICall
from tests.factories import operator_with_players
from tests.operator_api.conftest import client_for_key, written

pytestmark = pytest.mark.django_db

PLAYER = {"code": "p9", "currencies": ["EUR"]}
SESSION = {"player": "p1", "currency": "EUR"}
TRANSFER = {"transfer_id": "T-1", "player": "p1", "currency": "EUR", "amount": "10.00", "direction": "in"}


def refused(client, method, path, body=None, *, status=400, code="invalid_input", raw=None):
    """Send the request; assert its answer (``status``, ``code``, a detail), that nothing but one
    audit row was written, and return the answer's body."""
    before, audited = written(), OperatorAPICall.objects.count()
    kwargs = {"data": raw, "content_type": "application/json"} if raw is not None else \
        {"data": body, "format": "json"} if body is not None else {}
    response = getattr(client, method)(path, **kwargs)
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    answer = response.json()
    assert answer["code"] == code and answer["detail"], answer
    assert written() == before
    assert OperatorAPICall.objects.count() == audited + 1
    return answer


@pytest.mark.parametrize("body, code", [
    ({}, "invalid_input"),
    ({"currencies": ["EUR"]}, "invalid_input"),                          # code missing
    ({"code": "p9"}, "invalid_input"),                                    # currencies missing
    ({**PLAYER, "currencies": []}, "invalid_input"),
    ({**PLAYER, "currencies": "EUR"}, "invalid_input"),
    ({**PLAYER, "currencies": [1]}, "invalid_input"),
    ({**PLAYER, "currencies": ["XYZ"]}, "currency_not_allowed"),          # unknown
    ({**PLAYER, "currencies": ["EUR", "GBP"]}, "currency_not_allowed"),   # not acme's
    ({**PLAYER, "code": 9}, "invalid_input"),
    ({**PLAYER, "code": ""}, "invalid_input"),
    ({**PLAYER, "code": "p 9"}, "invalid_input"),
    ({**PLAYER, "code": "acme:p9"}, "invalid_input"),
    ({**PLAYER, "code": "x" * 65}, "invalid_input"),
    ({**PLAYER, "code": "p\x009"}, "invalid_input"),
    ({**PLAYER, "account_kind": "vip"}, "invalid_input"),
    ({**PLAYER, "account_kind": None}, "invalid_input"),
    ({**PLAYER, "display_name": 5}, "invalid_input"),
    ({**PLAYER, "display_name": "a\x00b"}, "invalid_input"),
    ({**PLAYER, "display_name": "x" * 101}, "invalid_input"),
    ({**PLAYER, "operator": "bolt"}, "invalid_input"),                    # extra field
    ([PLAYER], "invalid_input"),
    ("p9", "invalid_input"),
])
def test_bad_player_bodies(api, body, code):
    refused(api, "post", "/api/operator/v1/players/", body, code=code)


@pytest.mark.parametrize("path, body, detail", [
    ("players/", {**PLAYER, "display_name": "a\x00b"}, "display_name: must not contain NUL characters"),
    ("players/", {**PLAYER, "code": "p\x009"}, "code: must not contain NUL characters"),
    ("sessions/", {**SESSION, "currency": "E\x00R"}, "currency: must not contain NUL characters"),
])
def test_a_nul_gets_one_message_not_two_run_together(api, path, body, detail):
    """Issue 20, F8: a NUL in a text field is one sentence (DRF's and the field's own validator
    answered together: "no NUL characters Null characters are not allowed.")."""
    assert refused(api, "post", f"/api/operator/v1/{path}", body)["detail"] == detail


def test_an_update_dropping_a_currency_of_the_players_wallets_is_refused(api):
    """The body is the player's state, and a wallet once opened stays: a currencies list without
    one of the player's currencies asks for a change the platform does not make."""
    answer = refused(api, "post", "/api/operator/v1/players/", {"code": "p1", "currencies": ["USD"]},
                     status=409, code="wallet_kept")
    assert "EUR" in answer["detail"]


def test_a_real_player_holding_money_is_not_made_a_trial_one(api):
    body = {"code": "p1", "account_kind": "trial", "currencies": ["EUR", "USD"]}
    answer = refused(api, "post", "/api/operator/v1/players/", body, status=409, code="account_kind_in_use")
    assert "100.00 EUR" in answer["detail"]


def test_a_real_player_with_a_bet_open_is_not_made_a_trial_one(api, acme):
    from tests.factories import BoundlessTableFactory
    from tests.player_api.conftest import play

    play(BoundlessTableFactory(), {"dealer": ["7D", "TC"], "player_cards": ["TH", "6C"], "bets": [
        {"id": "o", "player": "acme:p2", "type": "main", "stake": "100.00", "actions": ["stand"]}]}, settle=False)
    out = {"transfer_id": "out-USD", "player": "p2", "currency": "USD", "amount": "100.00", "direction": "out"}
    assert api.post("/api/operator/v1/transfers/", out, format="json").status_code == 201  # EUR's is the stake
    body = {"code": "p2", "account_kind": "trial", "currencies": ["EUR", "USD"]}
    answer = refused(api, "post", "/api/operator/v1/players/", body, status=409, code="account_kind_in_use")
    assert "bet" in answer["detail"]


def test_a_currency_given_twice_is_refused(api):
    """Issue 20, F8: a player's currencies name each currency once (``["EUR", "EUR"]`` was
    taken as one)."""
    answer = refused(api, "post", "/api/operator/v1/players/", {**PLAYER, "currencies": ["EUR", "USD", "EUR"]})
    assert answer["detail"] == "currencies: EUR given more than once"


def test_an_operator_created_with_a_currency_twice_is_refused(db):
    from io import StringIO

    from django.core.management import CommandError, call_command

    from accounts.models import Operator
    from tests.factories import CurrencyFactory

    CurrencyFactory(code="EUR")
    with pytest.raises(CommandError, match="currencies: EUR given more than once"):
        call_command("create_operator", "zeta", "--currencies", "EUR,EUR", stdout=StringIO())
    assert not Operator.objects.filter(code="zeta").exists()


@pytest.mark.parametrize("body, status, code", [
    ({}, 400, "invalid_input"),
    ({"player": "p1"}, 400, "invalid_input"),
    ({**SESSION, "currency": "GBP"}, 400, "currency_not_allowed"),
    ({**SESSION, "currency": 1}, 400, "invalid_input"),
    ({**SESSION, "player": ["p1"]}, 400, "invalid_input"),
    ({**SESSION, "player": "p9"}, 404, "not_found"),
    ({**SESSION, "lifetime": 99999}, 400, "invalid_input"),
])
def test_bad_session_bodies(api, body, status, code):
    refused(api, "post", "/api/operator/v1/sessions/", body, status=status, code=code)


@pytest.mark.parametrize("body, status, code", [
    ({**TRANSFER, "amount": 10.0}, 400, "invalid_amount"),                # a float
    ({**TRANSFER, "amount": 10}, 400, "invalid_amount"),                  # a JSON number
    ({**TRANSFER, "amount": "10.001"}, 400, "invalid_amount"),
    ({**TRANSFER, "amount": "10.0000"}, 400, "invalid_amount"),
    ({**TRANSFER, "amount": "0"}, 400, "invalid_amount"),
    ({**TRANSFER, "amount": "-5.00"}, 400, "invalid_amount"),
    ({**TRANSFER, "amount": "1e3"}, 400, "invalid_amount"),
    ({**TRANSFER, "amount": " 5.00"}, 400, "invalid_amount"),
    ({**TRANSFER, "amount": "NaN"}, 400, "invalid_amount"),
    ({**TRANSFER, "amount": "9" * 16}, 400, "invalid_amount"),
    ({**TRANSFER, "amount": None}, 400, "invalid_input"),
    ({**TRANSFER, "direction": "sideways"}, 400, "invalid_input"),
    ({**TRANSFER, "direction": True}, 400, "invalid_input"),
    ({**TRANSFER, "transfer_id": ""}, 400, "invalid_input"),
    ({**TRANSFER, "transfer_id": 1}, 400, "invalid_input"),
    ({**TRANSFER, "transfer_id": "T/1"}, 400, "invalid_input"),
    ({**TRANSFER, "currency": "GBP"}, 400, "currency_not_allowed"),
    ({**TRANSFER, "currency": "XYZ"}, 400, "currency_not_allowed"),
    ({**TRANSFER, "player": "p9"}, 404, "not_found"),
    ({**TRANSFER, "direction": "out", "amount": "100.01"}, 409, "insufficient_funds"),
    ({**TRANSFER, "memo": "x"}, 400, "invalid_input"),
    ({k: v for k, v in TRANSFER.items() if k != "direction"}, 400, "invalid_input"),
    ({k: v for k, v in TRANSFER.items() if k != "amount"}, 400, "invalid_input"),
])
def test_bad_transfer_bodies(api, body, status, code):
    refused(api, "post", "/api/operator/v1/transfers/", body, status=status, code=code)


@pytest.mark.parametrize("raw", [
    '{"transfer_id": "T-1", "player": "p1", "currency": "EUR", "amount": "1.00", "amount": "100.00", '
    '"direction": "in"}',                                                 # a repeated key
    '{"transfer_id": "T-1", ',                                            # not JSON
    '{"transfer_id": "T-1", "player": "p1", "currency": "EUR", "amount": NaN, "direction": "in"}',
    '{"transfer_id": "\\ud800", "player": "p1", "currency": "EUR", "amount": "1.00", "direction": "in"}',
    "[" * 100_000 + "]" * 100_000,
    '{"transfer_id": "T-1", "player": "p1", "currency": "EUR", "amount": "1.00", "direction": "in", "n": '
    + "9" * 5_000 + "}",                                                   # more digits than Python converts
])
def test_malformed_json_is_invalid_input(api, raw):
    detail = refused(api, "post", "/api/operator/v1/transfers/", raw=raw)["detail"]
    assert "sys." not in detail  # a sentence for the integrator, not about the platform's interpreter


def test_a_huge_body_is_refused(api):
    huge = json.dumps({**TRANSFER, "transfer_id": "T-1", "padding": "x" * 3_000_000})
    before = written()
    response = api.post("/api/operator/v1/transfers/", huge, content_type="application/json")
    assert response.status_code == 413 and response.json()["code"] == "request_too_large"
    assert written() == before


def test_a_form_body_is_refused(api):
    response = api.post("/api/operator/v1/transfers/", TRANSFER)  # multipart
    assert response.status_code == 415 and response.json()["code"] == "unsupported_media_type"


def test_the_same_transfer_id_with_another_body_is_a_conflict(api):
    assert api.post("/api/operator/v1/transfers/", TRANSFER, format="json").status_code == 201
    for change in ({"amount": "10.50"}, {"direction": "out"}, {"player": "p2"}, {"currency": "USD"}):
        detail = refused(api, "post", "/api/operator/v1/transfers/", {**TRANSFER, **change}, status=409,
                         code="idempotency_conflict")["detail"]
        assert f"transfer_id {TRANSFER['transfer_id']!r} was already used" in detail
        assert "transfer:" not in detail  # the ledger's posting key is internal


def test_a_seamless_operator_moves_no_money_and_shows_no_balance(db):
    _, key, _ = operator_with_players("seam", ["p1"], wallet_mode="seamless")
    client = client_for_key(key)
    refused(client, "post", "/api/operator/v1/transfers/", TRANSFER, status=409, code="wrong_wallet_mode")
    refused(client, "get", "/api/operator/v1/players/p1/balance", status=409, code="wrong_wallet_mode")


@pytest.mark.parametrize("query", [
    "cursor=garbage", "cursor=MA", "cursor=LTE", "cursor=MDE", "cursor=MQ==", "cursor=OTk5OTk5OTk5OTk5OTk5OTk5OTk",
    "cursor=", "cursor=MQ&cursor=Mg", "page_size=0", "page_size=1001", "page_size=x", "page_size=1&page_size=2",
    "since=1", "cursor=M%00Q", "%00=1", "format=api",
])
def test_bad_statement_queries(api, query):
    assert "\x00" not in refused(api, "get", f"/api/operator/v1/statement/?{query}")["detail"]  # never echoed


@pytest.mark.parametrize("query", [
    "player=p1&player=p2", "player=", "player=p%001", "variant=poker", "round=abc", "date_from=2026-13-01",
    "tz=Mars/Olympus", "cursor=garbage", "page_size=201", "operator=bolt", "totals=maybe",
])
def test_bad_bet_queries(api, query):
    refused(api, "get", f"/api/operator/v1/bets/?{query}")


@pytest.mark.parametrize("method, path", [
    ("post", "/api/operator/v1/players/?x=1"), ("get", "/api/operator/v1/players/p1?x=1"),
    ("get", "/api/operator/v1/players/p1/balance?currency=EUR"), ("delete", "/api/operator/v1/sessions/abc?x=1"),
    ("get", "/api/operator/v1/rounds/1?x=1&x=2"),
])
def test_unknown_query_parameters_are_refused_everywhere(api, method, path):
    refused(api, method, path, PLAYER if method == "post" else None)


@pytest.mark.parametrize("path", [
    "/api/operator/v1/players/p%001", "/api/operator/v1/players/%F0%9F%98%80", "/api/operator/v1/players/" + "x" * 300,
    "/api/operator/v1/players/p%001/balance", "/api/operator/v1/rounds/abc", "/api/operator/v1/rounds/0",
    "/api/operator/v1/rounds/99999999999999999999", "/api/operator/v1/rounds/%00",
])
def test_malformed_path_values_are_json_404(api, path):
    refused(api, "get", path, status=404, code="not_found")
    assert "\x00" not in OperatorAPICall.objects.latest("pk").path


@pytest.mark.parametrize("token", ["nope", "%00", "x" * 300])
def test_revoking_an_unknown_session_is_404(api, token):
    refused(api, "delete", f"/api/operator/v1/sessions/{token}", status=404, code="not_found")


@pytest.mark.parametrize("body, status, code", [
    ({"token": "nope"}, 404, "not_found"),
    ({"token": "x" * 300}, 400, "invalid_input"),
    ({}, 400, "invalid_input"),
    ({"token": ""}, 400, "invalid_input"),
    ({"token": 12}, 400, "invalid_input"),
    ({"token": "nope", "player": "p1"}, 400, "invalid_input"),
])
def test_ending_an_unknown_session_or_with_a_bad_body_is_refused(api, body, status, code):
    refused(api, "post", "/api/operator/v1/sessions/end", body, status=status, code=code)


def test_other_methods_are_405(api):
    refused(api, "get", "/api/operator/v1/transfers/", status=405, code="method_not_allowed")
    refused(api, "put", "/api/operator/v1/players/p1", PLAYER, status=405, code="method_not_allowed")
    refused(api, "options", "/api/operator/v1/bets/", status=405, code="method_not_allowed")


@pytest.mark.parametrize("path, body", [
    ("players/", {**PLAYER, "currencies": ["EUR\x00"]}),
    ("players/", {**PLAYER, "note\x00": "x"}),
    ("transfers/", {**TRANSFER, "memo": {"deep": ["a\x00"]}}),
])
def test_a_nul_anywhere_in_a_body_is_refused_before_any_field(api, path, body):
    """A NUL in any string of a body, a key or a value at any depth, is the parser's 400: the
    same guard as every API's (``delivery.api.common.SafeJSONParser``)."""
    assert "must not contain NUL characters" in refused(api, "post", f"/api/operator/v1/{path}", body)["detail"]
