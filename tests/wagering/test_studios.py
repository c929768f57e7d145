"""Issue 20, trust boundaries of the game-server API: a studio's service account acts on its own
studio's tables only (another's answer 404 exactly as a table or round that does not exist), is
throttled per key and may have to sign its requests; bets only for players in a live session;
what the game server learns (no balance, one answer for unknown and foreign players); stacked
bets; money in minor units; batch statuses; the reading endpoints."""

import json
import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone
from rest_framework.settings import api_settings
from rest_framework.test import APIClient

from accounts.models import PlayerSession
from delivery.api.game.signing import signed_headers
from tables.models import Round, Studio, StudioAPIKey
from tables.studios import create_service_key, revoke_service_key
from tests.factories import (
    BoundlessTableFactory,
    ClassicTableFactory,
    CurrencyFactory,
    PlayerFactory,
    TableFactory,
    fund,
    operator_with_players,
)
from wagering.models import Bet

from .conftest import studio_client
from .helpers import balance
from .test_api import open_round
from .test_hardening import json_error

pytestmark = pytest.mark.django_db
D = Decimal


@pytest.fixture
def studio_b(db):
    """A second studio with one classic table and a service account: ``(client, table)``."""
    studio = Studio.objects.create(code="studio-b", name="Studio B")
    return studio_client(studio, name="b-server"), ClassicTableFactory(studio=studio)


# --- 1: each service account acts on its own studio's tables only ----------------------------------

def test_a_studio_reaches_no_other_studios_table_or_round_answered_as_missing(eur, game_client, studio_b):
    b_client, b_table = studio_b
    player = PlayerFactory(funded="100.00")
    round_id = open_round(game_client, BoundlessTableFactory(), external_id="A-1")
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {
        "key": "k", "player": player.code, "type": "main", "stake": "10.00"}, format="json").status_code == 201
    missing = 10**9
    for method, path, body in [
            ("get", "rounds/{}/", None), ("get", "rounds/{}/bets/", None),
            ("post", "rounds/{}/bets/", {"key": "x", "player": player.code, "type": "main", "stake": "1.00"}),
            ("post", "rounds/{}/close/", None), ("post", "rounds/{}/extras/", {"bet": "k", "kind": "insurance"}),
            ("post", "rounds/{}/events/", {"events": [{"kind": "decision"}]}),
            ("post", "rounds/{}/result/", {"record": {}}), ("post", "rounds/{}/suspend/", {"reason": "x"}),
            ("post", "rounds/{}/resume/", None), ("post", "rounds/{}/cancel/", {"reason": "x"})]:
        theirs = getattr(b_client, method)(f"/api/game/v1/{path.format(round_id)}", body, format="json")
        nothing = getattr(b_client, method)(f"/api/game/v1/{path.format(missing)}", body, format="json")
        assert json_error(theirs, 404, "not_found")["detail"] == f"no round {round_id}", path
        assert json_error(nothing, 404, "not_found")["detail"] == f"no round {missing}", path
    a_table = Bet.objects.get().table.code
    for code in (a_table, "no-such-table"):
        body = json_error(b_client.post(f"/api/game/v1/tables/{code}/rounds/", {"external_id": "B-1", "shoe": 1},
                                        format="json"), 404, "not_found")
        assert body["detail"] == f"no table {code!r}"
        json_error(b_client.get(f"/api/game/v1/tables/{code}/rounds/?external_id=A-1"), 404, "not_found")
    assert [t["code"] for t in b_client.get("/api/game/v1/tables/").json()] == [b_table.code]
    assert Bet.objects.count() == 1 and balance(player) == D("90.00")
    assert b_client.post(f"/api/game/v1/tables/{b_table.code}/rounds/",
                         {"external_id": "B-1", "shoe": 1, "burn_count": 2}, format="json").status_code == 201


def test_each_service_account_has_a_throttle_of_its_own(eur, game_client, studio_b):
    b_client, _ = studio_b
    rates = {**api_settings.DEFAULT_THROTTLE_RATES, "game_server": "3/min"}
    with override_settings(REST_FRAMEWORK={**api_settings.user_settings, "DEFAULT_THROTTLE_RATES": rates}):
        answers = [game_client.get("/api/game/v1/tables/").status_code for _ in range(4)]
        assert answers == [200, 200, 200, 429]
        assert b_client.get("/api/game/v1/tables/").status_code == 200  # another key, its own count


def test_service_keys_are_stored_hashed_and_refused_once_revoked_or_expired(eur, db):
    studio = Studio.objects.get(code="default")
    answers = {}
    for case in ("usable", "revoked", "expired"):
        key, raw, _ = create_service_key(studio=studio, name=case)
        assert raw not in key.pk and raw not in key.hashed_key  # only the hash is kept
        if case == "revoked":
            revoke_service_key(key=key)
        if case == "expired":
            StudioAPIKey.objects.filter(pk=key.pk).update(expiry_date=timezone.now() - timedelta(seconds=1))
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        answers[case] = client.get("/api/game/v1/tables/")
    assert answers["usable"].status_code == 200
    for case in ("revoked", "expired"):
        json_error(answers[case], 401, "authentication_failed")


def test_a_signing_service_account_must_sign_each_request_once(eur, db):
    studio = Studio.objects.get(code="default")
    _, raw, secret = create_service_key(studio=studio, name="signed", signed=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    table = TableFactory()
    path = f"/api/game/v1/tables/{table.code}/rounds/"
    body = json.dumps({"external_id": "R-1", "shoe": 1, "burn_count": 2}).encode()

    def post(headers, data=body):
        return client.post(path, data, content_type="application/json",
                           headers={k: v for k, v in headers.items()})

    assert json_error(post({}), 401, "authentication_failed")
    stale = signed_headers(secret, "POST", path, body, now=time.time() - 3600)
    assert "away from the clock" in json_error(post(stale), 401, "authentication_failed")["detail"]
    assert json_error(post(signed_headers(secret, "POST", path, body), data=body.replace(b"R-1", b"R-2")), 401)
    assert json_error(post(signed_headers("not-the-secret", "POST", path, body)), 401)
    good = signed_headers(secret, "POST", path, body)
    assert post(good).status_code == 201
    assert "replayed" in json_error(post(good), 401, "authentication_failed")["detail"]
    huge = {**signed_headers(secret, "POST", path, body), "X-Signature-Timestamp": "9" * 400}
    assert "away from the clock" in json_error(post(huge), 401, "authentication_failed")["detail"]
    foreign = {**signed_headers(secret, "POST", path, body), "X-Signature": "é"}
    assert "hexadecimal" in json_error(post(foreign), 401, "authentication_failed")["detail"]


def test_a_retry_in_the_same_second_is_signed_afresh_with_a_new_nonce(eur, db):
    """The same call sent twice at once (a retry after a timeout) is two requests, each with its
    nonce and signature: both are answered (the open's idempotency makes the second a replay of
    the round); the same nonce again is a replay; no nonce, or one changed after signing, is refused."""
    _, raw, secret = create_service_key(studio=Studio.objects.get(code="default"), name="signed", signed=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    path = f"/api/game/v1/tables/{TableFactory().code}/rounds/"
    body = json.dumps({"external_id": "R-1", "shoe": 1, "burn_count": 2}).encode()

    def post(headers):
        return client.post(path, body, content_type="application/json", headers=headers)

    now = time.time()
    first, retry = (signed_headers(secret, "POST", path, body, now=now) for _ in range(2))
    assert first["X-Signature-Nonce"] != retry["X-Signature-Nonce"]
    assert [post(first).status_code, post(retry).status_code] == [201, 200]
    assert "replayed" in json_error(post(retry), 401, "authentication_failed")["detail"]
    unsigned = {k: v for k, v in signed_headers(secret, "POST", path, body).items() if k != "X-Signature-Nonce"}
    assert "X-Signature-Nonce" in json_error(post(unsigned), 401, "authentication_failed")["detail"]
    swapped = {**signed_headers(secret, "POST", path, body), "X-Signature-Nonce": "a" * 32}
    assert "does not match" in json_error(post(swapped), 401, "authentication_failed")["detail"]
    for bad in ("short", "x" * 65, "not a nonce with spaces", "é" * 20):
        nonce = {**signed_headers(secret, "POST", path, body, nonce=bad)}
        assert "X-Signature-Nonce" in json_error(post(nonce), 401, "authentication_failed")["detail"], bad


def test_a_nonce_is_remembered_per_service_account(eur, db):
    """Another service account using the same nonce is no replay of the first one's request."""
    studio = Studio.objects.get(code="default")
    path = f"/api/game/v1/tables/{TableFactory().code}/rounds/?external_id=S-1"
    answers = []
    for name in ("one", "two"):
        _, raw, secret = create_service_key(studio=studio, name=name, signed=True)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        answers.append(client.get(path, headers=signed_headers(secret, "GET", path, b"", nonce="n" * 32)).status_code)
    assert answers == [404, 404]  # no round S-1, for either: both were taken


def test_the_documented_example_signature_is_reproducible():
    """docs/game-server-api.md's worked example: the exact string signed and its signature."""
    from delivery.api.game.signing import signature

    message = signature("example-secret", 1767225600, "POST", "/api/game/v1/tables/CLASSIC-1/rounds/",
                        b'{"external_id":"C-1001","shoe":1,"burn_count":3}', nonce="6f1c2b9e4d8a4f0e9b7c3a5d2e1f0a9b")
    docs = (settings.BASE_DIR / "docs" / "game-server-api.md").read_text()
    assert message in docs


@pytest.mark.parametrize(("target", "answer"), [
    ("/api/game/v1/tables/{code_encoded}/rounds/?external_id=S%2D1", 404),  # no round S-1 (yet)
    ("/api/game/v1/tables/{code}/rounds/?", 400)])  # external_id is required
@pytest.mark.parametrize("raw_uri", ["RAW_URI", "REQUEST_URI"])  # gunicorn's; uWSGI's and others'
def test_a_signature_covers_the_path_and_query_exactly_as_sent(eur, db, target, answer, raw_uri):
    _, raw, secret = create_service_key(studio=Studio.objects.get(code="default"), name="signed", signed=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    code = TableFactory().code
    sent = target.format(code=code, code_encoded=code.replace("-", "%2D"))
    as_django_has_it = sent.rstrip("?").replace(code.replace("-", "%2D"), code)
    now = time.time()
    normalised = client.get(sent, **{raw_uri: sent}, headers=signed_headers(secret, "GET", as_django_has_it, b"",
                                                                            now=now))
    assert "does not match" in json_error(normalised, 401, "authentication_failed")["detail"]
    assert client.get(sent, **{raw_uri: sent}, headers=signed_headers(secret, "GET", sent, b"", now=now)) \
        .status_code == answer


def test_without_the_raw_target_a_signature_covers_the_path_re_quoted(eur, db):
    """A server that passes no raw request target (Django's runserver): the path as Django
    re-quotes it (``get_full_path``), a ``?`` with no query left out."""
    _, raw, secret = create_service_key(studio=Studio.objects.get(code="default"), name="signed", signed=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    code = TableFactory().code
    sent = f"/api/game/v1/tables/{code.replace('-', '%2D')}/rounds/?external_id=S-1"
    assert client.get(sent, headers=signed_headers(secret, "GET", sent, b"")).status_code == 401
    signed = f"/api/game/v1/tables/{code}/rounds/?external_id=S-1"
    assert client.get(sent, headers=signed_headers(secret, "GET", signed, b"")).status_code == 404  # no round S-1


# --- 1, 6: bets only for players in a live session; one answer for unknown and foreign players ----

def test_bets_only_for_players_in_a_live_session_one_answer_for_every_other_code(eur, game_client):
    CurrencyFactory(code="USD")
    in_play, revoked, expired, other_currency = (PlayerFactory(funded="100.00") for _ in range(4))
    PlayerSession.objects.filter(player=revoked).update(revoked_at=timezone.now())
    PlayerSession.objects.filter(player=expired).update(expires_at=timezone.now())
    PlayerSession.objects.filter(player=other_currency).delete()
    fund(other_currency, "100.00", "USD")  # a session in USD, the table plays EUR
    _, _, brand = operator_with_players("acme", ["p1"], funded="100.00")
    round_id = open_round(game_client, BoundlessTableFactory())
    codes = [revoked.code, expired.code, other_currency.code, "no-such-player", "p1"]
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {"bets": [
        {"key": f"k{i}", "player": code, "type": "main", "stake": "10.00"} for i, code in enumerate(codes)]
        + [{"key": "ok", "player": in_play.code, "type": "main", "stake": "10.00"},
           {"key": "brand", "player": brand["p1"].game_code, "type": "main", "stake": "10.00"}]}, format="json")
    assert response.status_code == 207
    errors = [r["error"] for r in response.json()["results"]]
    assert errors[-2:] == [None, None]  # in session; acme's player is named <operator>:<code>
    assert [(e["code"], e["detail"]) for e in errors[:-2]] == [
        ("not_found", f"no player {code!r} in a live session in EUR") for code in codes]
    assert Bet.objects.count() == 2


def test_insufficient_funds_never_tells_the_balance(eur, game_client):
    poor = PlayerFactory(funded="3.00")
    round_id = open_round(game_client, BoundlessTableFactory())
    body = json_error(game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {
        "key": "k", "player": poor.code, "type": "main", "stake": "10.00"}, format="json"), 409, "insufficient_funds")
    assert "3.00" not in body["detail"] and "3.0000" not in body["detail"]
    assert body["detail"] == "the player's wallet cannot cover the stake"


# --- 8: limits per player, position and bet type, per round ----------------------------------------

def test_rules_6_7_8_stacked_bets_are_refused(eur, game_client):
    classic, boundless = ClassicTableFactory(limits={"behind": ("1.00", "250.00", "1.00"),
                                                     "pair": ("1.00", "50.00", "1.00")}), BoundlessTableFactory()
    seated, rider = PlayerFactory(funded="2000.00"), PlayerFactory(funded="2000.00")
    round_id = open_round(game_client, classic)
    url = f"/api/game/v1/rounds/{round_id}/bets/"
    bets = [{"key": "m", "player": seated.code, "type": "main", "stake": "10.00", "seat": 1}]
    bets += [{"key": f"b{i}", "player": rider.code, "type": "behind", "stake": "250.00", "seat": 1} for i in range(3)]
    bets += [{"key": f"p{i}", "player": rider.code, "type": "pair", "stake": "50.00", "seat": 1} for i in range(3)]
    codes = [r["error"] and r["error"]["code"] for r in game_client.post(url, {"bets": bets}, format="json")
             .json()["results"]]
    assert codes == [None, None, "bet_stacked", "bet_stacked", None, "bet_stacked", "bet_stacked"]
    assert balance(rider) == D("1700.00")
    again = game_client.post(url, {"key": "b9", "player": rider.code, "type": "behind", "stake": "1.00", "seat": 1},
                             format="json")
    json_error(again, 409, "bet_stacked")
    shared = open_round(game_client, boundless)
    results = game_client.post(f"/api/game/v1/rounds/{shared}/bets/", {"bets": [
        {"key": "x1", "player": rider.code, "type": "main", "stake": "5.00"},
        {"key": "x2", "player": rider.code, "type": "main", "stake": "7.00"}]}, format="json").json()["results"]
    assert [r["error"] and r["error"]["code"] for r in results] == [None, "bet_stacked"]


# --- 12: money in the currency's minor units in every answer -------------------------------------

def test_replays_extras_and_limit_errors_answer_minor_units(eur, game_client):
    player = PlayerFactory(funded="100.00")
    round_id = open_round(game_client, BoundlessTableFactory(limits={"main": ("1.00", "500.00", "1.00")}))
    url = f"/api/game/v1/rounds/{round_id}/bets/"
    body = {"key": "k", "player": player.code, "type": "main", "stake": "5.00"}
    first, replay = game_client.post(url, body, format="json"), game_client.post(url, body, format="json")
    assert (first.status_code, replay.status_code) == (201, 200)
    assert first.json()["bets"][0]["stake"] == replay.json()["bets"][0]["stake"] == "5.00"
    limit = json_error(game_client.post(url, {**body, "key": "big", "type": "main", "stake": "600.00"},
                                        format="json"), 400)
    assert limit["detail"].startswith("main stakes are 1.00 to 500.00, not 600.00"), limit
    game_client.post(f"/api/game/v1/rounds/{round_id}/close/")
    game_client.post(f"/api/game/v1/rounds/{round_id}/events/", {"events": [
        {"kind": "card_scanned", "card": card, "to": to}
        for card, to in (("5H", "player"), ("9S", "dealer"), ("6D", "player"), ("7D", "dealer"))]}, format="json")
    extra = game_client.post(f"/api/game/v1/rounds/{round_id}/extras/",
                             {"bet": "k", "kind": "double", "cards": ["5H", "6D"]}, format="json").json()
    assert extra["extra"]["amount"] == "5.00"
    again = game_client.post(f"/api/game/v1/rounds/{round_id}/extras/",
                             {"bet": "k", "kind": "double", "cards": ["5H", "6D"]}, format="json").json()
    assert again["extra"]["amount"] == "5.00"
    bets = game_client.get(f"/api/game/v1/rounds/{round_id}/bets/").json()["bets"]
    assert (bets[0]["stake"], bets[0]["extras"][0]["amount"]) == ("5.00", "5.00")


# --- 13: batch statuses, replays, the reading endpoints ------------------------------------------

def test_a_batch_of_which_no_item_was_accepted_is_422_none_accepted(eur, game_client):
    round_id = open_round(game_client, BoundlessTableFactory())
    player = PlayerFactory(funded="100.00")
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {"bets": [
        {"key": "a", "player": "nobody", "type": "main", "stake": "10.00"},
        {"key": "b", "player": player.code, "type": "main", "stake": "1.001"}]}, format="json")
    body = json_error(response, 422, "none_accepted")
    assert [r["error"]["code"] for r in body["results"]] == ["not_found", "invalid_amount"]


def test_replaying_an_open_round_answers_200_and_a_shoe_never_goes_backwards(eur, game_client):
    table = TableFactory()
    url = f"/api/game/v1/tables/{table.code}/rounds/"
    first = game_client.post(url, {"external_id": "R-1", "shoe": 100, "burn_count": 2}, format="json")
    again = game_client.post(url, {"external_id": "R-1", "shoe": 100, "burn_count": 2}, format="json")
    assert (first.status_code, again.status_code) == (201, 200) and first.json() == again.json()
    game_client.post(f"/api/game/v1/rounds/{first.json()['id']}/cancel/", {"reason": "host disconnected"},
                     format="json")
    behind = game_client.post(url, {"external_id": "R-2", "shoe": 2, "burn_count": 2}, format="json")
    assert "never goes backwards" in json_error(behind, 409, "illegal_transition")["detail"]
    assert game_client.post(url, {"external_id": "R-2", "shoe": 101, "burn_count": 2}, format="json").status_code == 201


def test_tables_with_limits_a_round_by_external_id_and_its_bets(eur, game_client):
    table = BoundlessTableFactory(limits={"main": ("1.00", "500.00", "0.50")})
    listed = {t["code"]: t for t in game_client.get("/api/game/v1/tables/").json()}[table.code]
    assert listed["variant"] == "boundless" and listed["minor_units"] == 2
    assert {"bet_type": "main", "min_stake": "1.00", "max_stake": "500.00", "chip_step": "0.50"} in listed["limits"]
    round_id = open_round(game_client, table, external_id="GS-9")
    found = game_client.get(f"/api/game/v1/tables/{table.code}/rounds/?external_id=GS-9")
    assert found.status_code == 200 and found.json()["id"] == round_id
    json_error(game_client.get(f"/api/game/v1/tables/{table.code}/rounds/?external_id=GS-10"), 404, "not_found")
    json_error(game_client.get(f"/api/game/v1/tables/{table.code}/rounds/"), 400, "invalid_input")
    twice = game_client.get(f"/api/game/v1/tables/{table.code}/rounds/?external_id=GS-10&external_id=GS-9")
    assert json_error(twice, 400, "invalid_input")["detail"] == "query parameter(s) given more than once: external_id"
    for url in (f"/api/game/v1/tables/{table.code}/rounds/?external_id=GS-9&foo=1", "/api/game/v1/tables/?format=api",
                f"/api/game/v1/rounds/{round_id}/bets/?page=2"):  # none is ignored, a misspelt one least of all
        detail = json_error(game_client.get(url), 400, "invalid_input")["detail"]
        assert detail.startswith("unknown query parameter(s): ")
    player = PlayerFactory(funded="100.00")
    game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {
        "key": "k", "player": player.code, "type": "main", "stake": "10.00"}, format="json")
    game_client.post(f"/api/game/v1/rounds/{round_id}/cancel/", {"reason": "x"}, format="json")
    from settlement.voids import void_round
    void_round(round_id=round_id, reason="host disconnected", actor="test")
    bets = game_client.get(f"/api/game/v1/rounds/{round_id}/bets/").json()
    assert bets["round"]["state"] == "voided"
    assert [(b["record_id"], b["player"], b["state"], b["stake"]) for b in bets["bets"]] == [
        ("k", player.game_code, "refunded", "10.00")]


@pytest.mark.parametrize("burn", [{}, {"burn_count": 0}, {"burn_count": 1}])
def test_a_new_shoe_burns_at_least_2_cards_a_round_on_it_any(eur, game_client, burn):
    """RULES 1: the shown card and as many as it is worth (an ace: 1), so a new shoe burns 2 to 11
    cards: fewer (or none given) is 400 ``invalid_input`` and opens nothing. A round on a shoe
    already open burns nothing: its count is not read (0 or none given, as before), and the same
    opening again is still its replay, another count still 409 ``idempotency_conflict``."""
    table = TableFactory()
    url = f"/api/game/v1/tables/{table.code}/rounds/"
    body = json_error(game_client.post(url, {"external_id": "R-1", "shoe": 1, **burn}, format="json"), 400,
                      "invalid_input")
    assert "burn_count" in body["detail"] and not table.rounds.exists() and not table.shoes.exists()
    first = {"external_id": "R-1", "shoe": 1, "burn_count": 2}
    assert game_client.post(url, first, format="json").status_code == 201
    assert game_client.post(url, first, format="json").status_code == 200
    json_error(game_client.post(url, {"external_id": "R-1", "shoe": 1, **burn}, format="json"), 409,
               "idempotency_conflict")
    closed = game_client.post(f"/api/game/v1/rounds/{table.rounds.get().pk}/close/")
    assert closed.status_code == 200
    Round.objects.filter(table=table).update(state=Round.State.SETTLED)
    assert game_client.post(url, {"external_id": "R-2", "shoe": 1, **burn}, format="json").status_code == 201
    assert table.shoes.get().burn_count == 2 and table.rounds.count() == 2


def test_a_new_shoe_burns_up_to_11_cards_the_shown_card_included(eur, game_client):
    """RULES 1: the shown card and as many as it is worth: a ten-value card shown burns 11 (the
    count the shoe's 416 cards include); 12 is no burn."""
    table = TableFactory()
    url = f"/api/game/v1/tables/{table.code}/rounds/"
    assert game_client.post(url, {"external_id": "R-1", "shoe": 1, "burn_count": 11}, format="json").status_code == 201
    json_error(game_client.post(url, {"external_id": "R-2", "shoe": 2, "burn_count": 12}, format="json"), 400,
               "invalid_input")
