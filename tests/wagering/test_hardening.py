"""The game-server API under hostile input: every error is a 4xx JSON ``{"code", "detail"}``,
never a 500 or an HTML page, and changes nothing (no money moves, nothing stored)."""

import copy
import json
from decimal import Decimal

import pytest

from accounts.exceptions import InvalidAmount
from accounts.models import LedgerTransaction
from accounts.money import parse_amount
from tables.models import Round, RoundEvent
from tests.factories import BoundlessTableFactory, PlayerFactory, TableFactory
from wagering.models import Bet

from .conftest import client_for
from .helpers import balance
from .test_api import drive_round, open_round

pytestmark = pytest.mark.django_db
D = Decimal


def json_error(response, status, code=None):
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = response.json()
    assert set(body) >= {"code", "detail"} and body["detail"], body
    if code:
        assert body["code"] == code, body
    return body


def unchanged(player, funded="100.00"):
    assert balance(player) == D(funded)
    assert not Bet.objects.exists()
    assert not LedgerTransaction.objects.filter(key__startswith="stake:").exists()


@pytest.fixture
def betting(eur, game_client):
    """``(post a bet body, player)`` on an open boundless round; the player has 100.00."""
    player = PlayerFactory(funded="100.00")
    round_id = open_round(game_client, BoundlessTableFactory())
    url = f"/api/game/v1/rounds/{round_id}/bets/"

    def post(**body):
        return game_client.post(url, {"key": "k", "player": player.code, "type": "main", "stake": "10.00", **body},
                                format="json")
    post.url, post.round_id, post.client = url, round_id, game_client
    return post, player


# --- 1, 3: amounts --------------------------------------------------------------------------------

@pytest.mark.parametrize("stake", ["1" + "0" * 40, "1e40", 5, 10, " 5.00 ", "5e0", "5.000", "05", "+5", "5.",
                                   ".5", "0x10", "Infinity", "NaN", "５", "1" * 70, True, None, ["5"], {"a": "5"}])
def test_malformed_stakes_are_invalid_amount_and_move_nothing(betting, stake):
    post, player = betting
    body = json_error(post(stake=stake), 400, "invalid_amount")
    assert "Decimal(" not in body["detail"]
    unchanged(player)


def test_parse_amount_is_strict_for_strings_but_takes_python_numbers():
    for bad in ["1" + "0" * 40, " 5.00 ", "5e0", "5.000", "05", "+5", "1_000", "5.", ".5"]:
        with pytest.raises(InvalidAmount) as error:
            parse_amount(bad, 2)
        assert "Decimal(" not in str(error.value)
    with pytest.raises(InvalidAmount, match="too large") as error:
        parse_amount(D("1E+40"), 2)
    assert "Decimal(" not in str(error.value)
    assert parse_amount("5", 2) == parse_amount("5.0", 2) == parse_amount(D("5.000"), 2) == parse_amount(5, 2) == D("5")
    assert parse_amount("-1.50", 2, allow_negative=True) == D("-1.50") and parse_amount("0", 2, allow_zero=True) == 0


# --- 1, 10: field types -----------------------------------------------------------------------------

@pytest.mark.parametrize("field,value", [
    ("player", ["x"]), ("player", {"a": 1}), ("player", 7), ("type", ["main"]), ("type", {"a": 1}),
    ("key", ["k"]), ("key", 7), ("key", ""), ("key", "k" * 200), ("record_id", 7), ("record_id", ["r"]),
    ("record_id", "r" * 200), ("player", "p" * 100), ("seat", True), ("seat", 2.0), ("seat", "2"), ("seat", [1]),
    ("key", "a\x00b"), ("record_id", "r\x00"), ("player", "p\x00"),
])
def test_mistyped_bet_fields_are_invalid_input(betting, field, value):
    post, player = betting
    json_error(post(**{field: value}), 400, "invalid_input")
    unchanged(player)


@pytest.mark.parametrize("seat", [0, 8, -1, 10**30])
def test_seats_that_do_not_exist_are_seat_not_allowed(eur, game_client, seat):
    player = PlayerFactory(funded="100.00")
    round_id = open_round(game_client, TableFactory(variant="premium"))
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {
        "key": "k", "player": player.code, "type": "main", "stake": "10.00", "seat": seat}, format="json")
    json_error(response, 400, "seat_not_allowed")
    unchanged(player)


def test_seat_types_on_a_seated_table(eur, game_client):
    player = PlayerFactory(funded="100.00")
    round_id = open_round(game_client, TableFactory(variant="premium"))
    url = f"/api/game/v1/rounds/{round_id}/bets/"
    for seat in (True, 2.0, "2"):
        response = game_client.post(url, {"key": "k", "player": player.code, "type": "main", "stake": "10.00",
                                          "seat": seat}, format="json")
        json_error(response, 400, "invalid_input")
    unchanged(player)
    response = game_client.post(url, {"key": "k", "player": player.code, "type": "main", "stake": "10.00", "seat": 2},
                                format="json")
    assert response.status_code == 201 and balance(player) == D("90.00")


@pytest.mark.parametrize("bad", [
    {"player": ["x"]}, {"player": {"a": 1}}, {"type": ["main"]}, {"stake": 10}, {"seat": True}, {"record_id": 7},
    {"key": " a"}, {"stake": "1" + "0" * 40},
])
def test_bulk_bets_check_each_items_types(betting, bad):
    post, player = betting
    good = {"key": "good", "player": player.code, "type": "main", "stake": "10.00"}
    body = {"bets": [{"key": "bad", "player": player.code, "type": "main", "stake": "10.00", **bad}, good]}
    response = _client(betting).post(post.url, body, format="json")
    assert response.status_code == 207, response.content[:300]  # one accepted, one rejected
    results = response.json()["results"]
    assert results[0]["error"]["code"] in ("invalid_input", "invalid_amount") and results[1]["error"] is None
    assert balance(player) == D("90.00") and list(Bet.objects.values_list("idempotency_key", flat=True)) == ["good"]
    assert RoundEvent.objects.filter(kind="bet_rejected").count() == 1


def _client(betting):
    """The game server's client (the one ``betting`` used)."""
    return betting[0].client


def test_rejected_bet_events_store_json_null(betting):
    post, player = betting
    json_error(post(player="nobody"), 404, "not_found")
    request = RoundEvent.objects.get(kind="bet_rejected").payload["request"]
    assert request["seat"] is None and request["record_id"] is None and request["key"] == "k"


# --- 1: other 500s --------------------------------------------------------------------------------

def test_open_round_huge_shoe_is_invalid_input(eur, game_client):
    table = BoundlessTableFactory()
    response = game_client.post(f"/api/game/v1/tables/{table.code}/rounds/", {"external_id": "R", "shoe": 10**30},
                                format="json")
    json_error(response, 400, "invalid_input")
    assert not Round.objects.exists()


def closed_round(game_client, player):
    round_id = open_round(game_client, BoundlessTableFactory())
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {
        "key": "m", "player": player.code, "type": "main", "stake": "10.00"}, format="json").status_code == 201
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/close/").status_code == 200
    return round_id


def test_event_payload_keys_may_be_any_name(eur, game_client):
    round_id = closed_round(game_client, PlayerFactory(funded="100.00"))
    events = [{"kind": "decision", "actor": "x", "actor_user": 3, "round_": 1, "event_kind": "y", "action": "hit"}]
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/events/", {"events": events}, format="json")
    assert response.status_code == 201, response.content
    row = RoundEvent.objects.get(kind="decision")
    assert row.payload == {k: v for k, v in events[0].items() if k != "kind"}
    assert row.actor == "game-server:default/game-server"


@pytest.mark.parametrize("payload", [{"card": "A\x00S"}, {"to": {"deep": ["ok", "x\x00"]}}, {"a\x00": 1}])
def test_nul_in_event_payloads_is_invalid_input(eur, game_client, payload):
    round_id = closed_round(game_client, PlayerFactory(funded="100.00"))
    before = RoundEvent.objects.count()
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/events/",
                                {"events": [{"kind": "card_scanned", **payload}]}, format="json")
    json_error(response, 400, "invalid_input")
    assert RoundEvent.objects.count() == before


@pytest.mark.parametrize("event", [
    {"kind": "decision", "action": "hit", "note": "h" * 100_000},
    {"kind": "auto_play", "action": "hit", "note": ["ok", {"why": "x" * 201}]},
    {"kind": "decision", "action": "hit", "k" * 201: "hit"},
])
def test_event_texts_are_bounded(eur, game_client, event):
    """Every text of an event (its values and keys, nested ones too) is at most 200 characters: a
    longer one is invalid input and nothing is written."""
    round_id = closed_round(game_client, PlayerFactory(funded="100.00"))
    before = RoundEvent.objects.count()
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/events/", {"events": [
        {"kind": "decision", "action": "hit"}, event]}, format="json")
    assert "at most 200 characters" in json_error(response, 400, "invalid_input")["detail"]
    assert RoundEvent.objects.count() == before
    ok = {"kind": "decision", "action": "hit", "note": "h" * 200}
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/events/", {"events": [ok]},
                            format="json").status_code == 201


@pytest.mark.parametrize("kind", [[], {}, ["card_scanned"], 7, None])
def test_an_event_kind_that_is_no_string_is_invalid_input(eur, game_client, kind):
    round_id = closed_round(game_client, PlayerFactory(funded="100.00"))
    before = RoundEvent.objects.count()
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/events/",
                                {"events": [{"kind": kind, "card": "AS", "to": "player"}]}, format="json")
    assert "kind must be one of" in json_error(response, 400, "invalid_input")["detail"]
    assert RoundEvent.objects.count() == before


def test_a_repeated_json_key_is_refused_on_the_game_server_and_player_apis(betting):
    """Which stake was meant by ``{"stake": "1.00", "stake": "25.00"}``? Neither is taken."""
    post, player = betting
    body = f'{{"key": "kz8", "player": "{player.code}", "type": "main", "stake": "1.00", "stake": "25.00"}}'
    response = post.client.post(post.url, body, content_type="application/json")
    assert "appears twice" in json_error(response, 400, "invalid_input")["detail"]
    assert not Bet.objects.filter(idempotency_key="kz8").exists()
    unchanged(player)
    response = client_for(player.user).post("/api/v1/disputes/", '{"bets": [1], "bets": [2], "reason": "x"}',
                                            content_type="application/json")
    assert "appears twice" in json_error(response, 400, "invalid_input")["detail"]


@pytest.mark.postgresql  # PostgreSQL refuses NUL in text and jsonb
def test_nul_bytes_never_reach_postgresql(betting, game_client):
    post, player = betting
    assert "key: must not" in json_error(post(key="a\x00b"), 400, "invalid_input")["detail"]
    assert "record_id: must not" in json_error(post(record_id="r\x00"), 400, "invalid_input")["detail"]
    bulk = _client(betting).post(post.url, {"bets": [{"key": "k\x00", "player": "p\x00", "type": "main\x00",
                                                       "stake": "1\x00"}]}, format="json")
    assert "bets[0]." in json_error(bulk, 400, "invalid_input")["detail"]  # the parser's: the whole body refused
    unchanged(player)
    assert not RoundEvent.objects.filter(kind="bet_rejected").exists()


def test_bulk_extras_check_each_items_types(eur, game_client):
    player = PlayerFactory(funded="100.00")
    round_id = closed_round(game_client, player)
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/extras/", {"extras": [
        {"bet": "", "kind": "insurance"}, {"bet": ["m"], "kind": "insurance"}, {"bet": "m", "kind": ["x"]},
        {"bet": "m", "kind": "insurance", "hand": True}, {"bet": "m", "kind": "double", "cards": [1, 2]},
        {"bet": "m", "kind": "double", "cards": ["5H" * 5, "6D"]}, "x",
    ]}, format="json")
    assert response.status_code == 422 and response.json()["code"] == "none_accepted", response.content[:300]
    assert [r["error"]["code"] for r in response.json()["results"]] == ["invalid_input"] * 7
    assert balance(player) == D("90.00")


def test_deeply_nested_json_is_invalid_input_on_both_apis(eur, game_client, betting):
    post, _ = betting
    deep = "[" * 100_000 + "]" * 100_000
    response = _client(betting).post(post.url, deep, content_type="application/json")
    json_error(response, 400, "invalid_input")
    player = PlayerFactory(funded="1.00")
    from .conftest import client_for
    response = client_for(player.user).post("/api/v1/disputes/", deep, content_type="application/json")
    json_error(response, 400, "invalid_input")


def test_body_too_large_is_json(betting):
    post, player = betting
    body = json.dumps({"bets": [{"key": str(i), "player": "x" * 60, "type": "main", "stake": "1.00"}
                                for i in range(40_000)]})
    assert len(body) > 3_000_000
    response = _client(betting).post(post.url, body, content_type="application/json")
    json_error(response, 413, "request_too_large")
    unchanged(player)


# --- 5: batch size ----------------------------------------------------------------------------------

def test_batches_are_capped_at_5000(betting, game_client):
    post, player = betting
    bets = [{"key": str(i), "player": player.code, "type": "main", "stake": "0.01"} for i in range(5001)]
    json_error(_client(betting).post(post.url, {"bets": bets}, format="json"), 400, "invalid_input")
    unchanged(player)
    extras = [{"bet": "m", "kind": "insurance"}] * 5001
    response = game_client.post(f"/api/game/v1/rounds/{post.round_id}/extras/", {"extras": extras}, format="json")
    json_error(response, 400, "invalid_input")


# --- 2: unknown paths ---------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/api/v1/nope", "/api/v1/me/", "/api/game/v1/nope/", "/api/",
                                  "/api/game/v1/rounds/x/"])
def test_unknown_api_paths_are_json_404(game_client, path):
    json_error(game_client.get(path), 404, "not_found")


def test_unknown_admin_paths_stay_html(admin_client):
    response = admin_client.get("/admin/nope/nope/")
    assert response.status_code == 404 and not response["Content-Type"].startswith("application/json")


# --- 6: retrying the result -----------------------------------------------------------------------------

def test_result_same_record_again_is_200_another_is_409(eur, game_client):
    round_id, record, players, _ = drive_round(game_client, "boundless", "boundless-777-side-bets")
    url = f"/api/game/v1/rounds/{round_id}/result/"
    events = RoundEvent.objects.filter(round_id=round_id).count()
    ledger = LedgerTransaction.objects.count()
    for state in (Round.State.RESULTED, Round.State.SETTLED, Round.State.SETTLEMENT_FAILED):
        Round.objects.filter(pk=round_id).update(state=state)
        again = game_client.post(url, {"record": record}, format="json")
        assert again.status_code == 200 and again.json()["id"] == round_id and again.json()["state"] == state
        other = copy.deepcopy(record)
        other["dealer"] = list(reversed(other["dealer"]))
        conflict = json_error(game_client.post(url, {"record": other}, format="json"), 409, "idempotency_conflict")
        assert conflict["state"] == state and "already holds another record" in conflict["detail"]
    assert RoundEvent.objects.filter(round_id=round_id).count() == events
    assert LedgerTransaction.objects.count() == ledger
    assert Round.objects.get(pk=round_id).record == record


def test_nul_in_the_record_is_invalid_input(eur, game_client):
    player = PlayerFactory(funded="100.00")
    round_id = closed_round(game_client, player)
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/result/", {"record": {"note": "a\x00"}},
                                format="json")
    json_error(response, 400, "invalid_input")
    assert Round.objects.get(pk=round_id).state == Round.State.CLOSED


# --- strict JSON: what PostgreSQL cannot store is refused at parsing ---------------------------------

UNSTORABLE = [r'"\ud800"', r'"a\udfffb"', "1e400", "-1e400"]


@pytest.mark.parametrize("value", UNSTORABLE)
def test_unstorable_json_is_invalid_input_on_every_write(eur, game_client, value):
    player = PlayerFactory(funded="100.00")
    bets_round = open_round(game_client, BoundlessTableFactory())
    closed = closed_round(game_client, player)
    before = (RoundEvent.objects.count(), LedgerTransaction.objects.count(), Bet.objects.count())
    for url, body in [
            (f"/api/game/v1/rounds/{bets_round}/bets/", f'{{"key": {value}, "player": "{player.code}", '
                                                        '"type": "main", "stake": "1.00"}'),
            (f"/api/game/v1/rounds/{bets_round}/bets/", f'{{"bets": [{{"key": "k", "player": {value}, '
                                                        '"type": "main", "stake": "1.00"}]}'),
            (f"/api/game/v1/rounds/{bets_round}/bets/", f'{{"key": "k", "player": "{player.code}", '
                                                        f'"type": "main", "stake": {value}}}'),
            (f"/api/game/v1/rounds/{closed}/events/", f'{{"events": [{{"kind": "card_scanned", "card": {value}}}]}}'),
            (f"/api/game/v1/rounds/{closed}/result/", f'{{"record": {{"note": {value}}}}}')]:
        json_error(game_client.post(url, body, content_type="application/json"), 400, "invalid_input")
    assert (RoundEvent.objects.count(), LedgerTransaction.objects.count(), Bet.objects.count()) == before
    assert Round.objects.get(pk=closed).state == Round.State.CLOSED


@pytest.mark.parametrize("charset", ["rot13", "base64", "no-such-charset"])
def test_a_charset_that_is_not_a_text_encoding_is_invalid_input(betting, charset):
    post, player = betting
    response = _client(betting).post(post.url, '{"key": "k"}', content_type=f"application/json; charset={charset}")
    json_error(response, 400, "invalid_input")
    unchanged(player)


@pytest.mark.parametrize("path, body", [
    ("cancel/", {"reason": "host lost", "host_disconnected": "yes"}),
    ("cancel/", {"reason": "host lost", "host_disconnected": 1}),
    ("suspend/", {"reason": 5}),
    ("extras/", {"bet": "m", "kind": "insurance", "hand": "1"}),
    ("extras/", {"bet": "m", "kind": "insurance", "hand": 1.0}),
    ("extras/", {"bet": "m", "kind": "double", "cards": ["5H", 6]}),
])
def test_request_fields_take_their_json_type_only(eur, game_client, path, body):
    round_id = closed_round(game_client, PlayerFactory(funded="100.00"))
    before = RoundEvent.objects.filter(round_id=round_id).count()
    json_error(game_client.post(f"/api/game/v1/rounds/{round_id}/{path}", body, format="json"), 400, "invalid_input")
    assert Round.objects.get(pk=round_id).state == Round.State.CLOSED
    assert RoundEvent.objects.filter(round_id=round_id).count() == before


@pytest.mark.postgresql
def test_surrogate_pairs_and_large_finite_numbers_are_kept(eur, game_client):
    round_id = closed_round(game_client, PlayerFactory(funded="100.00"))
    body = r'{"events": [{"kind": "decision", "action": "hit", "text": "\ud83c\udca1 ok", "x": 1e300}]}'
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/events/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    assert RoundEvent.objects.get(kind="decision").payload == {"action": "hit", "text": "\U0001f0a1 ok",
                                                              "x": 10**300}


def test_rejected_bet_events_store_infinite_floats_as_text():
    from wagering.validation import json_safe
    assert [json_safe(x) for x in (float("inf"), float("-inf"), float("nan"), 1.5)] == ["inf", "-inf", "nan", 1.5]


# --- 8: docs offline ----------------------------------------------------------------------------------

def test_docs_load_only_local_static_files(client):
    import re
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    urls = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html)
    assert urls and all(u.startswith("/") and not u.startswith("//") for u in urls), urls
    assert "cdn" not in html.lower() and "http://" not in html and "https://" not in html.replace(
        "https://github.com", "")
