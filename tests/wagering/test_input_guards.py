"""The game-server API's input guards: NUL bytes anywhere in a body or query string, the fields of
each play event, empty batches and blank keys, a cancel sent again, a malformed signature
timestamp. Each refusal is a 4xx JSON error and writes nothing."""

import json

import pytest
from rest_framework.test import APIClient

from delivery.api.game.signing import signed_headers
from tables.models import Round, RoundEvent, Studio, StudioAPIKey
from tables.studios import create_service_key
from tests.factories import BoundlessTableFactory, PlayerFactory, TableFactory
from wagering.models import Bet, BetExtra

from .test_api import open_round
from .test_hardening import closed_round, json_error

pytestmark = pytest.mark.django_db


# --- NUL bytes ------------------------------------------------------------------------------------

@pytest.mark.parametrize("path, body", [
    ("bets/", {"bets": [{"key": "k1", "player": "a\x00b", "type": "main", "stake": "1.00"}]}),
    ("bets/", {"key": "k1", "player": "p", "type": "main", "stake": "1.00", "note\x00": 1}),
    ("extras/", {"extras": [{"bet": "a\x00b", "kind": "insurance"}]}),
    ("extras/", {"bet": "m", "kind": "insurance", "cards": [["x\x00"]]}),
    ("events/", {"events": [{"kind": "decision", "action": "stand", "why": {"deep": ["x\x00"]}}]}),
    ("cancel/", {"reason": "a\x00b"}),
])
def test_a_nul_anywhere_in_a_game_server_body_is_invalid_input(eur, game_client, path, body):
    player = PlayerFactory(funded="100.00")
    round_id = closed_round(game_client, player) if path != "bets/" else open_round(game_client, TableFactory())
    before = (RoundEvent.objects.count(), Bet.objects.count())
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/{path}", body, format="json")
    assert "must not contain NUL characters" in json_error(response, 400, "invalid_input")["detail"]
    assert (RoundEvent.objects.count(), Bet.objects.count()) == before


@pytest.mark.parametrize("query", ["external_id=a%00b", "external_id=R-1&x%00=1"])
def test_a_nul_in_a_game_server_query_string_is_invalid_input(eur, game_client, query):
    table = TableFactory()
    open_round(game_client, table)
    response = game_client.get(f"/api/game/v1/tables/{table.code}/rounds/?{query}")
    assert "NUL" in json_error(response, 400, "invalid_input")["detail"]


# --- play events ----------------------------------------------------------------------------------

@pytest.mark.parametrize("event", [
    {"kind": "decision", "seat": {}, "action": "hit"},
    {"kind": "decision", "seat": None, "action": "hit"},
    {"kind": "decision", "seat": [], "action": "hit"},
    {"kind": "decision", "seat": True, "action": "hit"},
    {"kind": "decision", "seat": -1, "action": "hit"},
    {"kind": "decision", "seat": 0, "action": "hit"},
    {"kind": "decision", "seat": 8, "action": "hit"},
    {"kind": "decision", "seat": 1.5, "action": "hit"},
    {"kind": "decision", "seat": 1e30, "action": "hit"},
    {"kind": "decision", "seat": "", "action": "hit"},
    {"kind": "decision", "seat": "1", "action": "hit"},
    {"kind": "decision", "action": "hit"},
    {"kind": "decision", "seat": 1},
    {"kind": "decision", "seat": 1, "action": 1e30},
    {"kind": "decision", "seat": 1, "action": "fold"},
    {"kind": "decision", "seat": 1, "action": None},
    {"kind": "auto_play", "seat": 1, "action": "insurance"},
    {"kind": "auto_play", "action": "hit"},
    {"kind": "decision", "seat": 1, "action": "hit", "hand": 0},
    {"kind": "decision", "seat": 1, "action": "hit", "hand": True},
    {"kind": "decision", "seat": 1, "action": "hit", "hand": "1"},
    {"kind": "decision", "seat": 1, "action": "hit", "hand": 3},
])
def test_a_seated_tables_decisions_name_a_seat_and_an_engine_action(eur, game_client, event):
    table = TableFactory()
    round_id = open_round(game_client, table)
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/close/").status_code == 200
    before = RoundEvent.objects.filter(round_id=round_id).count()
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/events/", {"events": [
        {"kind": "decision", "seat": 1, "action": "stand"}, event]}, format="json")
    assert "events[1]" in json_error(response, 400, "invalid_input")["detail"]
    assert RoundEvent.objects.filter(round_id=round_id).count() == before


@pytest.mark.parametrize("event", [
    {"kind": "decision", "seat": 1, "action": "hit"},
    {"kind": "decision", "seat": None, "action": "hit"},
    {"kind": "auto_play", "action": "jump"},
    {"kind": "decision"},
])
def test_boundless_decisions_name_no_seat(eur, game_client, event):
    round_id = closed_round(game_client, PlayerFactory(funded="100.00"))
    before = RoundEvent.objects.filter(round_id=round_id).count()
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/events/", {"events": [event]}, format="json")
    assert "events[0]" in json_error(response, 400, "invalid_input")["detail"]
    assert RoundEvent.objects.filter(round_id=round_id).count() == before


def test_well_formed_decisions_are_stored(eur, game_client):
    table = TableFactory()
    round_id = open_round(game_client, table)
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/close/").status_code == 200
    events = [{"kind": "decision", "seat": table.seats, "action": "split"},
              {"kind": "auto_play", "seat": 1, "hand": 2, "action": "hit"}]
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/events/", {"events": events}, format="json")
    assert response.status_code == 201, response.content
    boundless = closed_round(game_client, PlayerFactory(funded="100.00"))
    response = game_client.post(f"/api/game/v1/rounds/{boundless}/events/", {"events": [
        {"kind": "decision", "record_id": "m", "action": "double"}]}, format="json")
    assert response.status_code == 201, response.content


def test_an_events_body_with_an_unknown_field_is_refused(eur, game_client):
    round_id = closed_round(game_client, PlayerFactory(funded="100.00"))
    before = RoundEvent.objects.filter(round_id=round_id).count()
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/events/", {
        "events": [{"kind": "card_scanned", "card": "AS", "to": "player"}], "extra": 1}, format="json")
    assert "extra" in json_error(response, 400, "invalid_input")["detail"]
    assert RoundEvent.objects.filter(round_id=round_id).count() == before


# --- batches and keys -----------------------------------------------------------------------------

@pytest.mark.parametrize("path, body", [("bets/", {"bets": []}), ("extras/", {"extras": []})])
def test_an_empty_batch_is_invalid_input(eur, game_client, path, body):
    round_id = closed_round(game_client, PlayerFactory(funded="100.00")) if path == "extras/" else \
        open_round(game_client, BoundlessTableFactory())
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/{path}", body, format="json")
    assert "at least one" in json_error(response, 400, "invalid_input")["detail"]


@pytest.mark.parametrize("path, body, expected", [
    ("bets/", "null", 'the body must be a JSON object: one bet, or {"bets": [...]} with a list of 1 to 5000 bets, '
                      "not null"),
    ("bets/", "[]", 'the body must be a JSON object: one bet, or {"bets": [...]} with a list of 1 to 5000 bets, '
                    "not an array"),
    ("bets/", '[{"key": "k"}]', "not an array"),
    ("bets/", '"x"', "not a string"),
    ("bets/", '{"bets": {}}', "bets: a list of 1 to 5000 bets is required, not an object"),
    ("bets/", '{"bets": null}', "bets: a list of 1 to 5000 bets is required, not null"),
    ("extras/", "null", 'the body must be a JSON object: one extra stake, or {"extras": [...]} with a list of 1 to '
                        "5000 extra stakes, not null"),
    ("extras/", "[]", "not an array"),
    ("extras/", '{"extras": {}}', "extras: a list of 1 to 5000 extra stakes is required, not an object"),
    ("events/", "null", 'the body must be a JSON object: {"events": [...]} with a list of 1 to 500 events, not null'),
    ("events/", "[]", 'the body must be a JSON object: {"events": [...]} with a list of 1 to 500 events, '
                      "not an array"),
    ("result/", "[]", 'the body must be a JSON object: {"record", "cut_card_out"}, not an array'),
    ("cancel/", "7", 'the body must be a JSON object: {"reason", "host_disconnected"}, not a number'),
])
def test_a_body_of_the_wrong_shape_is_told_what_is_expected(eur, game_client, path, body, expected):
    """Issue 20: a batch call's body that is no object (or whose list is not one) is answered with
    what the call expects, not a sentence about a field it never reached."""
    player = PlayerFactory(funded="100.00")
    round_id = open_round(game_client, BoundlessTableFactory()) if path == "bets/" else closed_round(game_client,
                                                                                                     player)
    before = (RoundEvent.objects.count(), Bet.objects.count())
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/{path}", body, content_type="application/json")
    assert expected in json_error(response, 400, "invalid_input")["detail"]
    assert (RoundEvent.objects.count(), Bet.objects.count()) == before


@pytest.mark.parametrize("key", [" ", "\t", " k", "k "])
def test_a_bet_key_is_refused_blank_or_padded(eur, game_client, key):
    player = PlayerFactory(funded="100.00")
    round_id = open_round(game_client, BoundlessTableFactory())
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/bets/",
                                {"key": key, "player": player.code, "type": "main", "stake": "10.00"}, format="json")
    assert "key" in json_error(response, 400, "invalid_input")["detail"]
    batch = game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {"bets": [
        {"key": key, "player": player.code, "type": "main", "stake": "10.00"}]}, format="json")
    assert batch.status_code == 422 and batch.json()["results"][0]["error"]["code"] == "invalid_input"
    assert not Bet.objects.exists()


# --- cancel replays -------------------------------------------------------------------------------

def test_a_cancel_sent_again_answers_the_round_as_it_is(eur, game_client):
    round_id = closed_round(game_client, PlayerFactory(funded="100.00"))
    url = f"/api/game/v1/rounds/{round_id}/cancel/"
    first = game_client.post(url, {"reason": "host lost"}, format="json")
    assert first.status_code == 200 and first.json()["state"] == "voided", first.content
    events = RoundEvent.objects.filter(round_id=round_id).count()
    again = game_client.post(url, {"reason": "host lost"}, format="json")
    assert again.status_code == 200, again.content
    assert again.json() == first.json()
    assert RoundEvent.objects.filter(round_id=round_id).count() == events


def test_a_cancel_of_a_settled_round_stays_a_conflict(eur, game_client):
    round_id = closed_round(game_client, PlayerFactory(funded="100.00"))
    Round.objects.filter(pk=round_id).update(state=Round.State.SETTLED)
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/cancel/", {"reason": "late"}, format="json")
    json_error(response, 409, "illegal_transition")


# --- signing --------------------------------------------------------------------------------------

@pytest.mark.parametrize("timestamp", ["1.5e9", "NaN", "+123", "-5", "１２３", " 123"])
def test_a_malformed_signature_timestamp_is_named(eur, db, timestamp):
    _, raw, secret = create_service_key(studio=Studio.objects.get(code="default"), name="signed", signed=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    path = f"/api/game/v1/tables/{TableFactory().code}/rounds/"
    body = json.dumps({"external_id": "R-1", "shoe": 1, "burn_count": 2}).encode()
    headers = {**signed_headers(secret, "POST", path, body), "X-Signature-Timestamp": timestamp}
    response = client.post(path, body, content_type="application/json", headers=headers)
    detail = json_error(response, 401, "authentication_failed")["detail"]
    assert "X-Signature-Timestamp must be" in detail and "are required" not in detail
    assert StudioAPIKey.objects.exists() and not Round.objects.exists()


@pytest.mark.parametrize("path, body", [
    ("bets/", {"bets": [{"key": "k", "player": "p", "type": "main", "stake": "1.00"}], "extra": 1}),
    ("bets/", {"key": "k", "player": "p", "type": "main", "stake": "1.00", "extra": 1}),
    ("extras/", {"extras": [{"bet": "m", "kind": "insurance"}], "extra": 1}),
    ("extras/", {"bet": "m", "kind": "insurance", "extra": 1}),
    ("suspend/", {"reason": "fault", "extra": 1}),
    ("cancel/", {"reason": "fault", "extra": 1}),
    ("result/", {"record": {}, "extra": 1}),
])
def test_every_round_body_refuses_unknown_keys(eur, game_client, path, body):
    player = PlayerFactory(funded="100.00")
    round_id = closed_round(game_client, player) if path != "bets/" else open_round(game_client, TableFactory())
    before = (RoundEvent.objects.count(), Bet.objects.count())
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/{path}", body, format="json")
    assert "extra: unknown field" in json_error(response, 400, "invalid_input")["detail"]
    assert (RoundEvent.objects.count(), Bet.objects.count()) == before


def test_an_open_refuses_unknown_keys(eur, game_client):
    table = TableFactory()
    response = game_client.post(f"/api/game/v1/tables/{table.code}/rounds/",
                                {"external_id": "R-1", "shoe": 1, "burn_count": 2, "extra": 1}, format="json")
    assert "extra: unknown field" in json_error(response, 400, "invalid_input")["detail"]
    assert not Round.objects.exists()


@pytest.mark.parametrize("path, item", [
    ("bets/", {"key": "k", "player": "P", "type": "main", "stake": "10.00", "zz": 1}),
    ("bets/", {"key": "k", "player": "P", "type": "main", "stake": "10.00", "recordid": "r-1"}),
    ("extras/", {"bet": "m", "kind": "insurance", "zz": 1}),
])
def test_a_batch_item_with_an_unknown_key_is_refused_and_moves_no_money(eur, game_client, path, item):
    """The third fresh attack: a bet item's unknown key was dropped and the bet placed (a misspelt
    ``seat`` or ``record_id`` silently lost); an item holds its call's keys only, as a body does."""
    player = PlayerFactory(funded="100.00")
    item = {**item, "player": player.code} if "player" in item else item
    round_id = closed_round(game_client, player) if path == "extras/" else open_round(game_client, TableFactory())
    before = (Bet.objects.count(), BetExtra.objects.count(), str(player.wallets.get().balance))
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/{path}", {path[:-1]: [item]}, format="json")
    assert response.status_code == 422, response.content
    error = response.json()["results"][0]["error"]
    assert error["code"] == "invalid_input" and "unknown field" in error["detail"], error
    assert (Bet.objects.count(), BetExtra.objects.count(), str(player.wallets.get().balance)) == before
