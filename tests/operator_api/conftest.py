"""Fixtures of the operator API tests: operators ``acme`` and ``bolt`` (transfer mode, EUR and USD),
both with a player ``p1`` (acme also ``p2``), each wallet funded with 100.00 through a transfer;
API clients signed in with their keys; a round both operators' players bet in; and a snapshot of
every table a request could write, to show that a refused one wrote nothing."""

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from accounts.models import Account, LedgerEntry, LedgerTransaction, Operator, OperatorAPICall, Player, PlayerSession
from tests.factories import BoundlessTableFactory, operator_with_players
from tests.player_api.conftest import play
from wagering.models import Bet

CURRENCIES = ("EUR", "USD")


def client_for_key(key):
    """An ``APIClient`` sending ``Authorization: Bearer <key>``."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.fixture
def acme(db):
    """``(Operator, raw key, {code: Player})`` of operator acme: players p1 and p2, 100.00 in each of
    EUR and USD."""
    return operator_with_players("acme", ["p1", "p2"], currencies=CURRENCIES, funded="100.00")


@pytest.fixture
def bolt(db):
    """Operator bolt: player p1, 100.00 in each of EUR and USD."""
    return operator_with_players("bolt", ["p1"], currencies=CURRENCIES, funded="100.00")


@pytest.fixture
def api(acme):
    """acme's API client."""
    return client_for_key(acme[1])


@pytest.fixture
def bolt_api(bolt):
    return client_for_key(bolt[1])


@pytest.fixture
def shared_round(acme, bolt):
    """A settled boundless EUR round: acme's p1 stakes 10.00 and hits to 21 (wins 20.00), bolt's p1
    stakes 5.00 and stands on 16 (loses). Dealer 7 T = 17."""
    return play(BoundlessTableFactory(), {
        "dealer": ["7D", "TC"], "player_cards": ["TH", "6C", "5S"],
        "bets": [{"id": "a", "player": "acme:p1", "type": "main", "stake": "10.00", "actions": ["hit"]},
                 {"id": "b", "player": "bolt:p1", "type": "main", "stake": "5.00", "actions": ["stand"]}]})


@pytest.fixture
def bolt_round(bolt):
    """A settled boundless EUR round with bolt's p1 alone in it (stakes 3.00, stands on 16, loses)."""
    return play(BoundlessTableFactory(), {
        "dealer": ["7D", "TC"], "player_cards": ["TH", "6C"],
        "bets": [{"id": "b", "player": "bolt:p1", "type": "main", "stake": "3.00", "actions": ["stand"]}]})


#: The tables a request of the operator API could write (its own audit rows aside).
WRITTEN = (get_user_model(), Operator, Player, PlayerSession, Account, LedgerTransaction, LedgerEntry, Bet)


def written():
    """``{model name: row count}`` of ``WRITTEN``, plus every wallet's balance and every session's
    end: a snapshot to compare before and after a refused request."""
    counts = {model.__name__: model.objects.count() for model in WRITTEN}
    counts["balances"] = sorted(Account.objects.values_list("pk", "balance"))
    counts["sessions"] = sorted(PlayerSession.objects.values_list("pk", "revoked_at", "last_used_at"))
    counts["players"] = sorted(Player.objects.values_list("pk", "account_kind", "display_name"))
    return counts


def calls():
    """The audit rows so far, oldest first: ``[(key prefix, method, path, status)]``."""
    return list(OperatorAPICall.objects.order_by("pk").values_list("key__prefix", "method", "path", "status"))
