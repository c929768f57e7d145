"""The game-server API: who may call it, the error format, and complete rounds per variant
(RULES 3-10, docs/round-record.md; records shaped like tests/data/cases)."""

import copy
import json
from decimal import Decimal
from pathlib import Path

import pytest

from accounts.selectors import account_balance
from accounts.services import default_operator, house_account
from tables.cards import record_cards, scan_events
from tables.engine import settle
from tables.models import Round, RoundEvent, Shoe, StudioAPIKey
from tables.studios import revoke_service_key
from tests.factories import (
    BoundlessTableFactory,
    PlayerFactory,
    PremiumTableFactory,
    TableFactory,
    UserFactory,
    deal,
    operator_with_players,
    scan,
)

from .conftest import client_for
from .helpers import balance, keys

pytestmark = pytest.mark.django_db
CASES = Path(__file__).resolve().parents[1] / "data" / "cases"
D = Decimal


def open_round(client, table, external_id="R-1", shoe=1, burn_count=2):
    response = client.post(f"/api/game/v1/tables/{table.code}/rounds/",
                           {"external_id": external_id, "shoe": shoe, "burn_count": burn_count}, format="json")
    assert response.status_code == 201, response.data
    return response.data["id"]


# --- who may call ----------------------------------------------------------------------------------

def test_only_game_server_accounts_may_call(eur, game_client):
    """A studio's service-account key (hashed, revocable) is the only way in: DRF tokens of
    users (players, superusers) and operators' keys are not game servers (401)."""
    table = TableFactory()
    url = f"/api/game/v1/tables/{table.code}/rounds/"
    body = {"external_id": "R-1", "shoe": 1, "burn_count": 2}
    player_user = PlayerFactory().user
    operator = UserFactory(is_staff=True, is_superuser=True)
    assert client_for(player_user).post(url, body, format="json").status_code == 401
    assert client_for(operator).post(url, body, format="json").status_code == 401
    from rest_framework.test import APIClient
    assert APIClient().post(url, body, format="json").status_code == 401
    _, operator_key, _ = operator_with_players("acme")
    operator_client = APIClient()
    operator_client.credentials(HTTP_AUTHORIZATION=f"Bearer {operator_key}")
    assert operator_client.post(url, body, format="json").status_code == 401
    assert game_client.post(url, body, format="json").status_code == 201
    revoke_service_key(key=game_client.key)
    assert game_client.post(url, body, format="json").data["code"] == "authentication_failed"
    assert StudioAPIKey.objects.get(pk=game_client.key.pk).hashed_key != game_client._credentials[
        "HTTP_AUTHORIZATION"].split()[1]


@pytest.mark.parametrize("external_id", [" WS-1 ", "WS-1\t", "\nWS-1", " "])
def test_a_round_id_with_surrounding_whitespace_is_refused_not_trimmed(eur, game_client, external_id):
    """The fifth fresh attack: `` WS-1 `` was opened as ``WS-1``, a round the studio could not find
    by the id it sent."""
    response = game_client.post(f"/api/game/v1/tables/{TableFactory().code}/rounds/",
                                {"external_id": external_id, "shoe": 1, "burn_count": 2}, format="json")
    assert response.status_code == 400 and response.data["code"] == "invalid_input", response.data
    assert "external_id" in response.data["detail"] and not Round.objects.exists()


# --- error format ----------------------------------------------------------------------------------

@pytest.mark.parametrize("stake", [10.5, "-1.00", "1.001", "abc"])
def test_malformed_amounts_get_invalid_amount_and_change_nothing(eur, game_client, stake):
    player = PlayerFactory(funded="100.00")
    round_id = open_round(game_client, BoundlessTableFactory())
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/bets/",
                                {"key": "k", "player": player.code, "type": "main", "stake": stake}, format="json")
    assert response.status_code == 400 and response.data["code"] == "invalid_amount" and response.data["detail"]
    assert balance(player) == D("100.00")


def test_error_codes(eur, game_client):
    player, poor = PlayerFactory(funded="100.00"), PlayerFactory(funded="1.00")
    table = TableFactory(variant="premium")
    round_id = open_round(game_client, table)
    url = f"/api/game/v1/rounds/{round_id}/bets/"

    def post(**body):
        return game_client.post(url, {"type": "main", "stake": "10.00", "seat": 1, **body}, format="json")

    assert post(key="a", player=player.code).status_code == 201
    assert post(key="a", player=player.code).status_code == 200  # same key again: the same bet
    cases = [
        (dict(key="a", player=player.code, stake="20.00"), 409, "idempotency_conflict"),
        (dict(key="b", player=poor.code, seat=2), 409, "insufficient_funds"),
        (dict(key="c", player=player.code, stake="5000.00", seat=2), 400, "limit_exceeded"),
        (dict(key="d", player=poor.code, stake="1.00"), 409, "seat_taken"),
        (dict(key="e", player=player.code, type="behind"), 400, "behind_own_seat"),
        (dict(key="f", player=player.code, type="behind", seat=3), 400, "seat_not_allowed"),
        (dict(key="g", player=player.code, type="lucky_trio", seat=None), 400, "side_bet_unavailable"),
        (dict(key="h", player="nobody"), 404, "not_found"),
    ]
    for body, status, code in cases:
        response = post(**body)
        assert (response.status_code, response.data["code"]) == (status, code), (body, response.data)
    assert game_client.post("/api/game/v1/rounds/999999/close/").data["code"] == "not_found"
    assert game_client.post("/api/game/v1/tables/nope/rounds/", {"external_id": "x", "shoe": 1},
                            format="json").data["code"] == "not_found"
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/resume/").data["code"] == "illegal_transition"
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/suspend/", {},
                            format="json").data["code"] == "invalid_input"
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/close/").status_code == 200
    response = post(key="z", player=player.code, seat=4)
    assert (response.status_code, response.data["code"]) == (409, "betting_closed")
    assert balance(player) == D("90.00") and balance(poor) == D("1.00")


def test_bulk_bets_one_result_each(eur, game_client):
    rich, poor = PlayerFactory(funded="100.00"), PlayerFactory(funded="1.00")
    round_id = open_round(game_client, BoundlessTableFactory())
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {"bets": [
        {"key": "1", "player": rich.code, "type": "main", "stake": "10.00"},
        {"key": "2", "player": poor.code, "type": "main", "stake": "10.00"},
        {"key": "3", "player": rich.code, "type": "pairs", "stake": "2.00"},
    ]}, format="json")
    results = response.data["results"]
    assert [r["error"] and r["error"]["code"] for r in results] == [None, "insufficient_funds", None]
    assert balance(rich) == D("88.00") and balance(poor) == D("1.00")


def test_bulk_extras_one_result_each(eur, game_client):
    rich, poor = PlayerFactory(funded="100.00"), PlayerFactory(funded="10.00")
    round_id = open_round(game_client, BoundlessTableFactory())
    game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {"bets": [
        {"key": "r", "player": rich.code, "type": "main", "stake": "10.00"},
        {"key": "p", "player": poor.code, "type": "main", "stake": "10.00"},
    ]}, format="json")
    game_client.post(f"/api/game/v1/rounds/{round_id}/close/")
    game_client.post(f"/api/game/v1/rounds/{round_id}/events/", {"events": [
        {"kind": "card_scanned", "card": card, "to": to}
        for card, to in (("5H", "player"), ("9S", "dealer"), ("6D", "player"), ("7D", "dealer"))]}, format="json")
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/extras/", {"extras": [
        {"bet": "r", "kind": "double", "cards": ["5H", "6D"]},
        {"bet": "p", "kind": "double", "cards": ["5H", "6D"]},
        {"bet": "r", "kind": "split"},
    ]}, format="json")
    assert response.status_code == 207  # some taken, one rejected
    results = response.data["results"]
    assert [(r["applied"], r["action"], r["error"] and r["error"]["code"]) for r in results] == [
        (True, "double", None), (False, "hit", None), (False, None, "invalid_input")]
    assert D(results[0]["extra"]["amount"]) == D("10.00")
    assert balance(rich) == D("80.00") and balance(poor) == D("0.00")


def test_extras_on_cards_never_scanned_or_after_the_peek_are_refused_and_take_nothing(eur, game_client):
    """Round 210: a split of 8H 8D and a double of 2C 3C on a shared hand scanned 5H 6D; round 209:
    a double after the dealer's blackjack at the peek. Refused (invalid_extra), nothing debited."""
    ben, anna = PlayerFactory(funded="100.00"), PlayerFactory(funded="100.00")
    for up, hole, extras in (("9S", "7D", [{"bet": "ben", "kind": "split", "cards": ["8H", "8D"]},
                                          {"bet": "anna", "kind": "double", "cards": ["2C", "3C"]}]),
                             ("AS", "KD", [{"bet": "anna", "kind": "double", "cards": ["5H", "6D"]}])):
        round_id = open_round(game_client, BoundlessTableFactory())
        game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {"bets": [
            {"key": f"{round_id}-ben", "record_id": "ben", "player": ben.code, "type": "main", "stake": "10.00"},
            {"key": f"{round_id}-anna", "record_id": "anna", "player": anna.code, "type": "main", "stake": "10.00"},
        ]}, format="json")
        game_client.post(f"/api/game/v1/rounds/{round_id}/close/")
        game_client.post(f"/api/game/v1/rounds/{round_id}/events/", {"events": [
            {"kind": "card_scanned", "card": card, "to": to}
            for card, to in (("5H", "player"), (up, "dealer"), ("6D", "player"), (hole, "dealer"))]}, format="json")
        response = game_client.post(f"/api/game/v1/rounds/{round_id}/extras/", {"extras": extras}, format="json")
        assert (response.status_code, response.data["code"]) == (422, "none_accepted")
        assert {r["error"]["code"] for r in response.data["results"]} == {"invalid_extra"}
    assert balance(ben) == balance(anna) == D("80.00") and not keys("split:") and not keys("double:")


@pytest.mark.parametrize("table_factory", [PremiumTableFactory, BoundlessTableFactory])
def test_insurance_once_the_hole_card_is_scanned_is_refused_and_takes_nothing(eur, game_client, table_factory):
    """Second fresh attack: insurance was taken after a dealer blackjack had been scanned as the
    hole card. Insurance is decided before the peek (RULES 3, 4): refused, invalid_extra, nothing
    debited."""
    anna = PlayerFactory(funded="100.00")
    table = table_factory()
    place, seat = ("player", None) if table.seats is None else ("seat:1", 1)
    round_id = open_round(game_client, table)
    assert game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {"bets": [
        {"key": "anna", "player": anna.code, "type": "main", "stake": "10.00", "seat": seat}]},
        format="json").status_code == 201
    game_client.post(f"/api/game/v1/rounds/{round_id}/close/")
    game_client.post(f"/api/game/v1/rounds/{round_id}/events/", {"events": [
        {"kind": "card_scanned", "card": card, "to": to}
        for card, to in (("5H", place), ("AS", "dealer"), ("6D", place), ("KD", "dealer"))]}, format="json")
    response = game_client.post(f"/api/game/v1/rounds/{round_id}/extras/", {"bet": "anna", "kind": "insurance"},
                                format="json")
    assert (response.status_code, response.json()["code"]) == (400, "invalid_extra"), response.content
    assert "before the peek" in response.json()["detail"]
    assert balance(anna) == D("90.00") and not keys("insurance:")


# --- complete rounds -------------------------------------------------------------------------------

def load_case(name):
    return json.loads((CASES / f"{name}.json").read_text())["record"]


def drive_round(client, variant, case):
    """Play the case's round through the API: open, bet, close, extras, result. Returns
    ``(round_id, record, players)``."""
    record = copy.deepcopy(load_case(case))
    table = TableFactory(variant=variant)
    Shoe.objects.create(table=table, sequence=1, rounds_dealt=record["shoe_round"] - 1)
    round_id = open_round(client, table, external_id="GS-77")
    record["round"] = "GS-77"
    players = {}
    for b in record["bets"]:
        if b["player"] not in players:
            players[b["player"]] = PlayerFactory(code=b["player"], funded="1000.00")
    url = f"/api/game/v1/rounds/{round_id}/bets/"
    for b in sorted(record["bets"], key=lambda b: b["type"] != "main"):  # seats first
        body = {"key": b["id"], "player": b["player"], "type": b["type"], "stake": b["stake"], "seat": b.get("seat")}
        assert client.post(url, body, format="json").status_code == 201
    assert client.post(f"/api/game/v1/rounds/{round_id}/close/").data["state"] == "closed"
    result = settle(record, rules=table.rules())
    bets = sorted(record["bets"], key=lambda b: b["type"] != "main")  # a seat's moves before their follows
    deal(round_id, record, hole_card=False)  # insurance is decided before the peek (RULES 3)
    for b in bets:
        if "insurance" in result.bets[b["id"]].extras:
            response = client.post(f"/api/game/v1/rounds/{round_id}/extras/", {"bet": b["id"], "kind": "insurance"},
                                   format="json")
            assert response.status_code == 200 and response.data["applied"], response.data
    deal(round_id, record)
    for b in bets:
        extras, hands = result.bets[b["id"]].extras, result.bets[b["id"]].hands
        place = "player" if variant == "boundless" else f"seat:{b['seat']}"
        prefix = "" if b["type"] == "main" else "follow_"
        todo = [(prefix + "split", 1, None)] if "split" in extras else []
        todo += [(prefix + "double", h + 1, hand) for h, hand in enumerate(hands) if hand.doubled]
        for kind, number, hand in todo:
            if hand is not None and hand.split:  # a split hand's cards are dealt when it comes into play
                more = (3 if number == 1 else len(hands[0].cards) + 2) if variant != "boundless" \
                    else len(record["player_cards"])
                deal(round_id, record, {place: more})
            cards = list(hand.cards[:2]) if hand is not None else record_cards(record)[place][:2]
            response = client.post(f"/api/game/v1/rounds/{round_id}/extras/",
                                   {"bet": b["id"], "kind": kind, "hand": number, "cards": cards}, format="json")
            assert response.status_code == 200 and response.data["applied"], response.data
    scan(round_id, record)
    response = client.post(f"/api/game/v1/rounds/{round_id}/result/", {"record": record}, format="json")
    assert response.status_code == 200, response.data
    return round_id, record, players, result


@pytest.mark.parametrize("variant,case", [
    ("classic", "classic-dealer-bj-after-double"),
    ("premium", "premium-split-double-behind-pairs"),
    ("boundless", "boundless-777-side-bets"),
])
def test_complete_round_through_the_api(eur, game_client, variant, case):
    round_id, record, players, result = drive_round(game_client, variant, case)
    round_ = Round.objects.get(pk=round_id)
    assert round_.state == Round.State.RESULTED and round_.record == record
    staked = {b["player"]: D(0) for b in record["bets"]}
    for b in record["bets"]:
        staked[b["player"]] += result.bets[b["id"]].staked
    for code, player in players.items():
        assert balance(player) == D("1000.00") - staked[code]
    house = house_account(name=round_.table.house_name, currency="EUR", operator=default_operator())
    assert account_balance(house) == sum(staked.values())
    assert len(keys("stake:")) == len(record["bets"])
    timeline = list(RoundEvent.objects.filter(round=round_).values_list("kind", flat=True))
    assert timeline[0] == "opened" and timeline[-1] == "resulted"
    assert timeline.count("bet_placed") == len(record["bets"]) and "betting_closed" in timeline
    assert timeline.count("card_scanned") == len(scan_events(record))
    detail = game_client.get(f"/api/game/v1/rounds/{round_id}/").data
    assert detail["state"] == "resulted" and len(detail["events"]) == len(timeline)


def test_invalid_record_is_refused_and_changes_nothing(eur, game_client):
    record = copy.deepcopy(load_case("premium-split-double-behind-pairs"))
    table = TableFactory(variant="premium")
    Shoe.objects.create(table=table, sequence=1, rounds_dealt=11)
    round_id = open_round(game_client, table, external_id="R-1")
    for code in dict.fromkeys(b["player"] for b in record["bets"]):
        PlayerFactory(code=code, funded="100.00")
    for b in sorted(record["bets"], key=lambda b: b["type"] != "main"):
        game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {"key": b["id"], "player": b["player"],
                         "type": b["type"], "stake": b["stake"], "seat": b["seat"]}, format="json")
    game_client.post(f"/api/game/v1/rounds/{round_id}/close/")
    url = f"/api/game/v1/rounds/{round_id}/result/"

    def refused(rec, detail=""):
        response = game_client.post(url, {"record": rec}, format="json")
        assert response.status_code == 400 and response.data["code"] == "invalid_record"
        assert detail in response.data["detail"], response.data
        return response.data["field"]

    # the engine accepts it, but the platform holds no split/double extras: they disagree
    assert refused(record) == "bets[0]"
    wrong_stake = copy.deepcopy(record)
    wrong_stake["bets"][3]["stake"] = "25.00"
    assert refused(wrong_stake, 'the record says "25.00"') == "bets[3].stake"
    illegal = copy.deepcopy(record)
    illegal["seats"]["1"]["actions"] = ["hit", "double"]
    assert refused(illegal).startswith("seats.1.actions")
    missing = copy.deepcopy(record)
    missing["bets"].pop()
    assert refused(missing) in ("bets", "seats.4")
    assert Round.objects.get(pk=round_id).state == Round.State.CLOSED and Round.objects.get(pk=round_id).record is None
