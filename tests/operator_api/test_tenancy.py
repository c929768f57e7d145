"""The tenant boundary: acme and bolt both have a player p1; acme's key never sees or acts on bolt's
players, sessions, bets, rounds, statement entries or transfers, also by guessing their ids. Each
such request answers exactly what an unknown one does, and writes nothing but its audit row."""

import pytest

from accounts.models import LedgerEntry, PlayerSession
from accounts.operators import open_session, token_hash, upsert_player
from delivery.api.operator.pagination import cursor_after
from tests.operator_api.conftest import written
from wagering.models import Bet
from wagering.selectors import has_open_bets

pytestmark = pytest.mark.django_db


def same_as_unknown(api, method, foreign_path, unknown_path, foreign_body=None, unknown_body=None):
    """``foreign_path`` (with ``foreign_body``: bolt's) answers acme exactly as ``unknown_path`` (with
    ``unknown_body``: nobody's) does, and neither writes anything. Returns both answers' bodies."""
    before = written()
    answers = []
    for path, body in ((foreign_path, foreign_body), (unknown_path, unknown_body)):
        response = getattr(api, method)(path, **({"data": body, "format": "json"} if body is not None else {}))
        assert response.status_code == 404 and response.json()["code"] == "not_found", response.content
        answers.append(response.json())
    assert written() == before
    return answers


def test_players_codes_are_per_operator(api, bolt_api, acme, bolt):
    assert api.get("/api/operator/v1/players/p1").json()["game_code"] == "acme:p1"
    assert bolt_api.get("/api/operator/v1/players/p1").json()["game_code"] == "bolt:p1"
    upsert_player(operator=bolt[0], code="bx", currencies=["EUR"], has_open_bets=has_open_bets)  # bolt's only
    foreign, unknown = same_as_unknown(api, "get", "/api/operator/v1/players/bx", "/api/operator/v1/players/by")
    assert foreign == {"code": "not_found", "detail": "no player 'bx'"}
    assert unknown == {"code": "not_found", "detail": "no player 'by'"}
    same_as_unknown(api, "get", "/api/operator/v1/players/bx/balance", "/api/operator/v1/players/by/balance")
    session = {"player": "bx", "currency": "EUR"}
    assert same_as_unknown(api, "post", "/api/operator/v1/sessions/", "/api/operator/v1/sessions/", session,
                           {**session, "player": "by"}) == [foreign, unknown]
    money = {"transfer_id": "T-1", "player": "bx", "currency": "EUR", "amount": "1.00", "direction": "in"}
    assert same_as_unknown(api, "post", "/api/operator/v1/transfers/", "/api/operator/v1/transfers/", money,
                           {**money, "player": "by"}) == [foreign, unknown]
    assert api.get("/api/operator/v1/bets/?player=bx").json()["results"] == []


def test_bolts_player_is_unknown_to_acme_by_its_game_code_too(api, bolt):
    foreign, unknown = same_as_unknown(api, "get", "/api/operator/v1/players/bolt%3Ap1",
                                       "/api/operator/v1/players/nobody%3Ap1")
    assert foreign["detail"] == "no player 'bolt:p1'" and unknown["detail"] == "no player 'nobody:p1'"


def test_an_upsert_of_p1_by_bolt_never_touches_acmes_p1(api, bolt_api, acme, bolt):
    response = bolt_api.post("/api/operator/v1/players/", {"code": "p1", "currencies": ["EUR", "USD"],
                                                           "display_name": "Bolt's"}, format="json")
    assert response.status_code == 200 and response.json()["game_code"] == "bolt:p1"
    assert api.get("/api/operator/v1/players/p1").json()["display_name"] == ""
    assert acme[2]["p1"].display_name == ""


def test_bolts_players_balance_and_sessions_are_out_of_reach(api, acme, bolt):
    _, token = open_session(operator=bolt[0], player="p1", currency="EUR")
    # bolt's p2 does not exist: acme's own p2 answers, bolt's sessions stay unknown
    assert api.get("/api/operator/v1/players/p2/balance").status_code == 200
    foreign, unknown = same_as_unknown(api, "delete", f"/api/operator/v1/sessions/{token}",
                                       "/api/operator/v1/sessions/no-such-token")
    assert foreign == unknown == {"code": "not_found", "detail": "no such session"}
    foreign, unknown = same_as_unknown(api, "post", "/api/operator/v1/sessions/end", "/api/operator/v1/sessions/end",
                                       {"token": token}, {"token": "no-such-token"})
    assert foreign == unknown == {"code": "not_found", "detail": "no such session"}
    assert PlayerSession.objects.get(token_hash=token_hash(token)).revoked_at is None


def test_sessions_and_transfers_act_on_the_callers_own_p1(api, acme, bolt):
    """The same code names acme's player for acme's key: the session and the money are acme's p1's."""
    token = api.post("/api/operator/v1/sessions/", {"player": "p1", "currency": "EUR"}, format="json").json()["token"]
    assert PlayerSession.objects.get(token_hash=token_hash(token)).player == acme[2]["p1"]
    api.post("/api/operator/v1/transfers/", {"transfer_id": "T-1", "player": "p1", "currency": "EUR",
                                             "amount": "7.00", "direction": "in"}, format="json")
    assert acme[2]["p1"].wallets.get(currency="EUR").balance == 107
    assert bolt[2]["p1"].wallets.get(currency="EUR").balance == 100


def test_transfer_ids_are_per_operator(api, bolt_api):
    body = {"transfer_id": "T-1", "player": "p1", "currency": "EUR", "amount": "5.00", "direction": "in"}
    assert api.post("/api/operator/v1/transfers/", body, format="json").status_code == 201
    other = bolt_api.post("/api/operator/v1/transfers/", {**body, "amount": "9.00"}, format="json")
    assert other.status_code == 201 and other.json()["balance_after"] == "109.00"  # bolt's own T-1, no conflict
    assert api.post("/api/operator/v1/transfers/", body, format="json").json()["balance_after"] == "105.00"


def test_bolts_bets_rounds_and_entries_are_out_of_reach(api, bolt_api, shared_round, bolt_round):
    bolts_bet = Bet.objects.get(round=shared_round, record_id="b")
    listed = api.get("/api/operator/v1/bets/").json()["results"]
    assert [b["id"] for b in listed] == [Bet.objects.get(round=shared_round, record_id="a").pk]
    assert api.get("/api/operator/v1/bets/?player=p1").json()["results"] == listed
    assert api.get(f"/api/operator/v1/bets/?round={bolt_round.pk}").json()["results"] == []
    # A round both played shows acme's bets only; bolt's round alone is unknown to acme.
    assert [b["id"] for b in api.get(f"/api/operator/v1/rounds/{shared_round.pk}").json()["bets"]] == [listed[0]["id"]]
    assert [b["id"] for b in bolt_api.get(f"/api/operator/v1/rounds/{shared_round.pk}").json()["bets"]] == [
        bolts_bet.pk]
    foreign, unknown = same_as_unknown(api, "get", f"/api/operator/v1/rounds/{bolt_round.pk}",
                                       f"/api/operator/v1/rounds/{bolt_round.pk + 1000}")
    assert (foreign["detail"], unknown["detail"]) == (f"no round {bolt_round.pk} of yours",
                                                      f"no round {bolt_round.pk + 1000} of yours")
    # The statement holds acme's players' entries only, whatever the cursor guesses.
    statement = api.get("/api/operator/v1/statement/?page_size=1000").json()["entries"]
    acmes = set(LedgerEntry.objects.filter(account__operator__code="acme", account__kind="wallet")
                .values_list("pk", flat=True))
    assert {e["id"] for e in statement} == acmes
    bolts_first = LedgerEntry.objects.filter(account__operator__code="bolt").order_by("pk").first().pk
    after = api.get(f"/api/operator/v1/statement/?cursor={cursor_after(bolts_first - 1)}").json()["entries"]
    assert {e["id"] for e in after} <= acmes


def test_a_guessed_bet_id_is_no_round(api, bolt_round):
    """A round id guessed from bolt's bet answers as any unknown round."""
    bet = Bet.objects.get(round=bolt_round)
    same_as_unknown(api, "get", f"/api/operator/v1/rounds/{bet.round_id}", "/api/operator/v1/rounds/987654321")
