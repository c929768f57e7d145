"""Raising and following disputes through the player API."""

import re

import pytest

from adminkit.roles import SUPERVISOR
from settlement.disputes import assign_dispute, resolve_dispute
from tests.factories import make_operator
from tests.wagering.conftest import client_for
from wagering.models import Bet

pytestmark = pytest.mark.django_db


def test_raise_and_follow_a_dispute(api, alice, premium_round):
    bets = sorted(Bet.objects.filter(player=alice).values_list("pk", flat=True))
    response = api.post("/api/v1/disputes/", {"bets": bets, "reason": "my 20 should pay more"}, format="json")
    assert response.status_code == 201, response.json()
    dispute = response.json()
    assert (dispute["bets"], dispute["status"], dispute["currency"], dispute["adjustment"]) == (
        bets, "open", "EUR", None)
    operator = make_operator(SUPERVISOR)  # the adjustment needs a supervisor's permission
    assign_dispute(dispute=dispute["id"], assignee=operator, actor=operator)
    resolve_dispute(dispute=dispute["id"], upheld=True, resolution="goodwill", adjustment="5.00", actor=operator)
    shown = api.get(f"/api/v1/disputes/{dispute['id']}").json()
    assert (shown["status"], shown["adjustment"], shown["resolution"]) == ("upheld", "5.00", "goodwill")
    assert "assignee" not in shown
    assert [d["id"] for d in api.get("/api/v1/disputes/").json()["results"]] == [dispute["id"]]


def test_a_bet_in_an_undecided_dispute_cannot_be_disputed_again(api, alice, premium_round):
    bet = Bet.objects.filter(player=alice).values_list("pk", flat=True).first()
    first = api.post("/api/v1/disputes/", {"bets": [bet], "reason": "not paid"}, format="json")
    again = api.post("/api/v1/disputes/", {"bets": [bet], "reason": "still not paid"}, format="json")
    assert first.status_code == 201 and again.status_code == 409, again.content
    assert again.json()["code"] == "dispute_exists" and str(first.json()["id"]) in again.json()["detail"]
    operator = make_operator(SUPERVISOR)  # the adjustment needs a supervisor's permission
    assign_dispute(dispute=first.json()["id"], assignee=operator, actor=operator)
    resolve_dispute(dispute=first.json()["id"], upheld=False, resolution="paid as the rules say", actor=operator)
    assert api.post("/api/v1/disputes/", {"bets": [bet], "reason": "I disagree"}, format="json").status_code == 201


def test_disputes_are_private(api, bob, premium_round):
    bobs_bet = Bet.objects.get(player=bob).pk
    response = api.post("/api/v1/disputes/", {"bets": [bobs_bet], "reason": "x"}, format="json")
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    dispute = client_for(bob.user).post("/api/v1/disputes/", {"bets": [bobs_bet], "reason": "x"}, format="json").json()
    assert api.get(f"/api/v1/disputes/{dispute['id']}").status_code == 404
    assert api.get("/api/v1/disputes/").json()["results"] == []


@pytest.mark.parametrize("body", [{}, {"bets": [], "reason": "x"}, {"bets": ["a"], "reason": "x"},
                                  {"bets": [1], "reason": ""}, {"bets": [10**30], "reason": "x"},
                                  {"bets": [1], "reason": "nul\x00"}, [1, 2], "text"])
def test_malformed_dispute_bodies(api, premium_round, body):
    response = api.post("/api/v1/disputes/", body, format="json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_input", response.json()


@pytest.mark.parametrize("blank", [" ", "\t\n", "\x1c", "\x85", "\u3000"])
def test_a_reason_of_spaces_is_refused_by_the_api_and_by_its_schema(api, alice, premium_round, blank):
    """The schema's pattern and the server agree on every character str.strip() removes (CI once saw
    Schemathesis send "\\x1c", which ECMA-262's \\S matches but Python strips)."""
    bet = Bet.objects.filter(player=alice).first().pk
    pattern = api.get("/api/schema/?format=json").json()["components"]["schemas"]["DisputeRequest"][
        "properties"]["reason"]["pattern"]
    for flags in (0, re.ASCII):  # the same answer whatever a dialect calls a space (ECMA-262's \s is not Python's)
        assert re.search(pattern, blank, flags) is None and re.search(pattern, blank + "x", flags)
    response = api.post("/api/v1/disputes/", {"bets": [bet], "reason": blank}, format="json")
    assert response.status_code == 400 and response.json()["detail"].startswith("reason:"), response.json()
    accepted = api.post("/api/v1/disputes/", {"bets": [bet], "reason": blank + "x"}, format="json")
    assert accepted.status_code == 201 and accepted.json()["reason"] == "x"


def test_a_reason_with_a_nul_is_refused_by_the_api_and_by_its_schema(api, alice, premium_round):
    """DRF refuses NUL in any text; the schema said nothing, so Schemathesis once sent one as valid."""
    bet = Bet.objects.filter(player=alice).first().pk
    pattern = api.get("/api/schema/?format=json").json()["components"]["schemas"]["DisputeRequest"][
        "properties"]["reason"]["pattern"]
    for reason in ("M\x00x", "\x00M", "M\x00"):
        assert re.search(pattern, reason) is None
        response = api.post("/api/v1/disputes/", {"bets": [bet], "reason": reason}, format="json")
        assert response.status_code == 400 and response.json()["detail"].startswith("reason:"), response.json()
    assert re.search(pattern, "M \n x")



@pytest.mark.parametrize("body", [
    lambda bet: {"bets": [str(bet)], "reason": "not paid"},
    lambda bet: {"bets": [float(bet)], "reason": "not paid"},
    lambda bet: {"bets": [True], "reason": "not paid"},
    lambda bet: {"bets": [bet], "reason": 5},
])
def test_a_dispute_takes_json_integers_and_a_string_reason_only(api, alice, premium_round, body):
    bet = Bet.objects.filter(player=alice).values_list("pk", flat=True).first()
    response = api.post("/api/v1/disputes/", body(bet), format="json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_input", response.content
    assert not api.get("/api/v1/disputes/").json()["results"]


def test_a_nul_in_a_reason_gets_one_answer_in_the_api_and_the_admin(api, alice, premium_round, client):
    from settlement.disputes import open_dispute
    from tests.factories import otp_login

    bet = Bet.objects.filter(player=alice).first()
    response = api.post("/api/v1/disputes/", {"bets": [bet.pk], "reason": "M\x00x"}, format="json")
    assert response.json() == {"code": "invalid_input", "detail": "reason: must not contain NUL characters"}
    dispute = open_dispute(player=alice, bets=[bet], reason="wrong card")
    otp_login(client, make_operator(SUPERVISOR))
    page = client.post(f"/admin/settlement/dispute/{dispute.pk}/resolve/",
                       {"decision": "rejected", "reason": "M\x00x"}).content.decode()
    assert page.count("A reason cannot contain NUL characters.") == 1 and "Null characters" not in page
