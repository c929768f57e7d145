"""Every operator API endpoint's success path."""

import base64

import pytest
from django.conf import settings

from accounts.models import LedgerEntry, Player, PlayerSession
from accounts.operators import token_hash
from delivery.api.operator.serializers import OperatorBetSerializer
from tests.factories import operator_with_players
from tests.operator_api.conftest import client_for_key
from tests.player_api.test_lists import add_bets
from wagering.models import Bet
from wagering.selectors import bets_for_operator

pytestmark = pytest.mark.django_db


def test_create_then_update_a_player(api, acme):
    body = {"code": "p3", "account_kind": "trial", "currencies": ["EUR"], "display_name": "Ann"}
    created = api.post("/api/operator/v1/players/", body, format="json")
    assert created.status_code == 201, created.content
    player = created.json()
    assert player.pop("created_at")
    assert player == {"code": "p3", "game_code": "acme:p3", "account_kind": "trial", "display_name": "Ann",
                      "currencies": ["EUR"]}
    updated = api.post("/api/operator/v1/players/", {"code": "p3", "currencies": ["EUR", "USD"]}, format="json")
    assert updated.status_code == 200, updated.content
    assert updated.json()["account_kind"] == "real" and updated.json()["display_name"] == ""  # the body is the state
    assert updated.json()["currencies"] == ["EUR", "USD"]
    dropped = api.post("/api/operator/v1/players/", {"code": "p3", "account_kind": "trial", "currencies": ["EUR"]},
                         format="json")
    assert dropped.status_code == 409 and dropped.json()["code"] == "wallet_kept"  # a wallet once opened stays
    back = api.post("/api/operator/v1/players/", {"code": "p3", "account_kind": "trial", "currencies": ["USD", "EUR"]},
                    format="json")
    assert back.status_code == 200 and back.json()["account_kind"] == "trial"  # real to trial: no money, no bet
    assert Player.objects.get(game_code="acme:p3").operator == acme[0]


def test_get_a_player(api):
    response = api.get("/api/operator/v1/players/p1")
    assert response.status_code == 200, response.content
    assert response.json()["game_code"] == "acme:p1" and response.json()["currencies"] == ["EUR", "USD"]


def test_balances_are_strings_with_the_currencys_minor_units(api):
    response = api.get("/api/operator/v1/players/p1/balance")
    assert response.status_code == 200, response.content
    assert response.json() == {"player": "p1", "balances": [
        {"currency": "EUR", "minor_units": 2, "play_for_fun": False, "balance": "100.00"},
        {"currency": "USD", "minor_units": 2, "play_for_fun": False, "balance": "100.00"}]}


def test_open_and_revoke_a_session(api, acme):
    response = api.post("/api/operator/v1/sessions/", {"player": "p1", "currency": "EUR"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == {"token", "expires_at", "idle_timeout_seconds"}
    assert body["idle_timeout_seconds"] == settings.PLAYER_SESSION_IDLE_SECONDS
    session = PlayerSession.objects.get(token_hash=token_hash(body["token"]))
    assert session.player == acme[2]["p1"] and session.currency_id == "EUR"
    assert api.delete(f"/api/operator/v1/sessions/{body['token']}").status_code == 204
    session.refresh_from_db()
    assert session.revoked_at is not None
    assert api.delete(f"/api/operator/v1/sessions/{body['token']}").status_code == 204  # idempotent
    session.refresh_from_db()
    assert session.revoked_at is not None


def test_end_a_session_with_its_token_in_the_body(api, acme):
    """``POST sessions/end``: the token out of the URL (and so out of every log of paths)."""
    token = api.post("/api/operator/v1/sessions/", {"player": "p1", "currency": "EUR"}, format="json").json()["token"]
    player = client_for_key(token)
    assert player.get("/api/v1/me").status_code == 200
    response = api.post("/api/operator/v1/sessions/end", {"token": token}, format="json")
    assert response.status_code == 204, response.content
    assert PlayerSession.objects.get(token_hash=token_hash(token)).revoked_at is not None
    assert player.get("/api/v1/me").status_code == 401
    assert api.post("/api/operator/v1/sessions/end", {"token": token}, format="json").status_code == 204  # idempotent


def test_a_session_minted_here_signs_the_player_in_to_the_player_api_until_revoked(api):
    token = api.post("/api/operator/v1/sessions/", {"player": "p1", "currency": "EUR"}, format="json").json()["token"]
    player = client_for_key(token)
    assert player.get("/api/v1/me").json()["code"] == "p1"
    api.delete(f"/api/operator/v1/sessions/{token}")
    assert player.get("/api/v1/me").status_code == 401


def test_transfer_in_and_out(api):
    body = {"transfer_id": "T-1", "player": "p1", "currency": "EUR", "amount": "12.5", "direction": "in"}
    first = api.post("/api/operator/v1/transfers/", body, format="json")
    assert first.status_code == 201, first.content
    answer = first.json()
    assert answer.pop("created_at")
    assert answer == {"transfer_id": "T-1", "player": "p1", "currency": "EUR", "amount": "12.50", "direction": "in",
                      "balance_after": "112.50"}
    out = api.post("/api/operator/v1/transfers/", {**body, "transfer_id": "T-2", "amount": "112.50",
                                                   "direction": "out"}, format="json")
    assert out.status_code == 201 and out.json()["balance_after"] == "0.00" and out.json()["amount"] == "112.50"
    assert api.get("/api/operator/v1/players/p1/balance").json()["balances"][0]["balance"] == "0.00"


def test_a_currency_of_three_decimals_is_shown_with_three(db):
    operator, key, _ = operator_with_players("kwd", ["p1"], currencies=("KWD",))
    operator.currencies.update(minor_units=3)
    api = client_for_key(key)
    body = {"transfer_id": "T-1", "player": "p1", "currency": "KWD", "amount": "1.5", "direction": "in"}
    answer = api.post("/api/operator/v1/transfers/", body, format="json").json()
    assert answer["amount"] == "1.500" and answer["balance_after"] == "1.500"


def test_bets_of_the_operators_players_with_filters_and_totals(api, acme, shared_round):
    operator, _, players = acme
    page = api.get("/api/operator/v1/bets/?totals=true")
    assert page.status_code == 200, page.content
    (bet,) = page.json()["results"]
    assert bet["player"] == "p1" and bet["stake"] == "10.00" and bet["returned"] == "20.00"
    assert bet["round"]["id"] == shared_round.pk
    assert page.json()["totals"] == [{"currency": "EUR", "count": 1, "staked": "10.00", "returned": "20.00",
                                      "net": "10.00", "open_count": 0, "open_staked": "0.00"}]
    assert api.get("/api/operator/v1/bets/?player=p1").json()["results"] == [bet]
    assert api.get("/api/operator/v1/bets/?player=p2").json()["results"] == []
    assert api.get("/api/operator/v1/bets/?variant=boundless&state=settled&outcome=win").json()["results"] == [bet]
    assert api.get("/api/operator/v1/bets/?variant=classic").json()["results"] == []


def test_bet_rows_match_the_bet_serializer(api, shared_round):
    (row,) = api.get("/api/operator/v1/bets/").json()["results"]
    (bet,) = bets_for_operator(shared_round.bets.get(record_id="a").player.operator)
    assert row == OperatorBetSerializer(bet).data


def test_pages_of_bets_follow_their_cursor(api, acme, shared_round):
    add_bets(shared_round, acme[2]["p2"], 5, shared_round.opened_at)
    seen, url = [], "/api/operator/v1/bets/?page_size=2"
    while url:
        page = api.get(url).json()
        seen += [b["id"] for b in page["results"]]
        url = page["next"]
    assert seen == list(Bet.objects.filter(player__operator=acme[0]).order_by("-placed_at", "-id")
                        .values_list("pk", flat=True))


def test_a_round_shows_its_result_and_the_operators_bets_only(api, shared_round):
    response = api.get(f"/api/operator/v1/rounds/{shared_round.pk}")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["result"]["dealer"]["cards"] == ["7D", "TC"] and body["result"]["player_cards"] == ["TH", "6C", "5S"]
    assert [(b["player"], b["stake"]) for b in body["bets"]] == [("p1", "10.00")]


def test_the_statement_pages_every_wallet_entry_in_id_order(api, acme, shared_round):
    operator = acme[0]
    expected = list(LedgerEntry.objects.filter(account__operator=operator, account__kind="wallet")
                    .order_by("id").values_list("id", flat=True))
    assert len(expected) == 6  # 4 transfers in, the stake, the payout
    seen, cursor, pages = [], None, 0
    while True:
        page = api.get("/api/operator/v1/statement/?page_size=4" + (f"&cursor={cursor}" if cursor else "")).json()
        pages += 1
        seen += [e["id"] for e in page["entries"]]
        cursor = page["next"]
        if not page["has_more"]:
            break
    assert seen == expected and pages == 2
    assert base64.urlsafe_b64decode(cursor + "==").decode() == str(expected[-1])
    stake = next(e for e in api.get("/api/operator/v1/statement/").json()["entries"] if e["kind"] == "stake")
    assert stake == {"id": stake["id"], "key": f"stake:{shared_round.bets.get(record_id='a').pk}", "kind": "stake",
                     "player": "p1", "currency": "EUR", "amount": "-10.00", "balance_after": "90.00",
                     "created_at": stake["created_at"]}
    # Read on later from the last cursor: nothing new yet, the same cursor back; then a new entry.
    later = api.get(f"/api/operator/v1/statement/?cursor={cursor}").json()
    assert later == {"entries": [], "next": cursor, "has_more": False}
    api.post("/api/operator/v1/transfers/", {"transfer_id": "T-9", "player": "p2", "currency": "USD",
                                             "amount": "1.00", "direction": "in"}, format="json")
    later = api.get(f"/api/operator/v1/statement/?cursor={cursor}").json()
    assert [(e["key"], e["player"], e["amount"], e["balance_after"]) for e in later["entries"]] == [
        ("transfer:acme:T-9", "p2", "1.00", "101.00")]
