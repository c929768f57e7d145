"""A seamless operator's player in the player API, against the reference wallet as its own process:
``me`` answers the balance the operator's wallet holds (the ``balance`` call), labelled so, or null
and why when the wallet does not answer, never the platform's journal of the movements; the ledger's
rows of a journal wallet show no ``balance_after`` (nor do they in the operator's statement), while
a transfer player's beside them do."""

from decimal import Decimal

import pytest
from django.core.cache import cache
from django.test import override_settings
from rest_framework.settings import api_settings

from accounts.models import Account
from accounts.operators import create_api_key
from delivery.api.player.serializers import BALANCE_UNKNOWN
from tests.factories import PremiumTableFactory
from tests.operator_api.conftest import client_for_key
from tests.operator_wallet.sandbox import SECRET, free_port
from tests.player_api.conftest import play
from tests.wagering.conftest import client_for
from tests.wallets.seamless import adjustment, seamless_operator

pytestmark = pytest.mark.django_db


@pytest.fixture
def sea(wallet):
    """Seamless operator ``sea``'s player ``p1`` (at the game server ``sea:p1``), 250.00 at the
    operator's wallet, and its player API client."""
    player = seamless_operator("sea", wallet.url, name="Sea Casino")[1]["p1"]
    wallet.set_player(player="p1", currency="EUR", balance="250.00")
    return player, client_for(player.user)


def _journal(player):
    return Account.objects.get(kind=Account.Kind.WALLET, player=player, currency_id="EUR")


def test_me_answers_the_operators_balance_not_the_journal(sea, wallet):
    player, api = sea
    adjustment(player, "5.00", "gift")  # the journal moves; the credit is not delivered yet
    assert _journal(player).balance == Decimal("5.00")
    response = api.get("/api/v1/me")
    assert response.status_code == 200
    assert response.json() == {"code": "p1", "account_kind": "real", "wallets": [
        {"currency": "EUR", "minor_units": 2, "play_for_fun": False, "balance": "250.00",
         "balance_source": "operator", "balance_unknown": None}]}
    assert wallet.state()["counters"]["calls"]["balance"] == 1


@pytest.mark.parametrize("fault", ["down", "wrong secret", "not there"])
def test_me_says_the_balance_is_unknown_when_the_operators_wallet_does_not_answer(wallet, fault):
    url = f"http://127.0.0.1:{free_port()}" if fault == "not there" else wallet.url
    player = seamless_operator("sea", url, secret="wrong" if fault == "wrong secret" else SECRET)[1]["p1"]
    if fault == "down":
        wallet.faults(down=True)
    response = client_for(player.user).get("/api/v1/me")
    assert response.status_code == 200
    (shown,) = response.json()["wallets"]
    assert (shown["balance"], shown["balance_source"], shown["balance_unknown"]) == (None, "operator", BALANCE_UNKNOWN)
    if fault == "down":  # back up, it answers (a new player's opening balance) once the answer kept expires
        wallet.faults(down=False)
        cache.clear()
        assert client_for(player.user).get("/api/v1/me").json()["wallets"][0]["balance"] == "1000.00"


def _play(sea_player, alice):
    """A premium round, settled: ``sea:p1`` stakes 20.00 on seat 1 (19) and alice 10.00 behind it;
    the dealer's 17 loses to both (paid 40.00 and 20.00)."""
    return play(PremiumTableFactory(), {
        "dealer": ["9D", "8C"],
        "seats": {"1": {"cards": ["TH", "9S"], "actions": ["stand"]}},
        "bets": [{"id": "s1", "player": sea_player.game_code, "type": "main", "stake": "20.00", "seat": 1},
                 {"id": "a1", "player": alice.code, "type": "behind", "stake": "10.00", "seat": 1}]})


def test_a_journal_wallets_ledger_rows_show_no_balance_after(sea, wallet, alice, api):
    player, sea_api = sea
    round_ = _play(player, alice)
    assert wallet.state()["players"]["p1"]["balances"]["EUR"] == "230.00"  # the stake's debit, synchronous
    entries = sea_api.get("/api/v1/ledger/").json()["results"]
    assert [(e["kind"], e["amount"], e["balance_after"]) for e in entries] == [
        ("payout", "40.00", None), ("stake", "-20.00", None)]  # the journal holds 20.00: not the money
    (bet,) = sea_api.get("/api/v1/bets/").json()["results"]
    assert bet["round"]["id"] == round_.pk and bet["returned"] == "40.00"
    detail = sea_api.get(f"/api/v1/bets/{bet['id']}").json()
    assert [(e["kind"], e["amount"], e["balance_after"]) for e in detail["ledger"]] == [
        ("stake", "-20.00", None), ("payout", "40.00", None)]  # the round's payout to p1 carries this bet's
    alices = [e["balance_after"] for e in api.get("/api/v1/ledger/").json()["results"]]
    assert alices[:2] == ["1010.00", "990.00"]  # a transfer player's wallet: the ledger's balance


def test_a_seamless_operators_statement_shows_no_balance_after(sea, alice):
    player, _ = sea
    _play(player, alice)
    _, key = create_api_key(operator=player.operator, name="statement")
    entries = client_for_key(key).get("/api/operator/v1/statement/").json()["entries"]
    assert [(e["player"], e["kind"], e["balance_after"]) for e in entries] == [
        ("p1", "stake", None), ("p1", "payout", None)]


def test_me_is_throttled_per_player_more_tightly_than_the_other_calls(sea, wallet):
    player, api = sea
    rates = {**api_settings.DEFAULT_THROTTLE_RATES, "player_me": "2/min"}
    with override_settings(REST_FRAMEWORK={**api_settings.user_settings, "DEFAULT_THROTTLE_RATES": rates}):
        assert [api.get("/api/v1/me").status_code for _ in range(3)] == [200, 200, 429]
        assert api.get("/api/v1/me").json()["code"] == "throttled"
        assert api.get("/api/v1/bets/").status_code == 200
    assert wallet.state()["counters"]["calls"]["balance"] == 1  # the second answer was the one kept
