"""The platform's largest amount and balance (``accounts.money.MONEY_LIMIT``): exact on SQLite
(which stores NUMERIC as REAL, 15 significant digits) and within PostgreSQL's money columns. An
amount reaching it is refused by ``parse_amount``; a posting that would bring a wallet's balance
to it (either sign) by ``accounts.services.post`` with ``BalanceLimit``, on every writing path,
nothing written."""

import itertools
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts import services as ledger
from accounts.exceptions import InvalidAmount
from accounts.models import Currency, LedgerTransaction
from accounts.money import MONEY_LIMIT, parse_amount
from tests.factories import operator_with_players

pytestmark = pytest.mark.django_db
_codes = itertools.count()
TOP = "99999999999.99"  # the largest EUR amount


@pytest.fixture
def wallet(db):
    eur = Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})[0]
    user = get_user_model().objects.create(username=f"limits-{next(_codes)}")
    return ledger.wallet_for(player=ledger.create_player(user=user, code=f"lim-{next(_codes)}"), currency=eur)


@pytest.fixture
def house(wallet):
    return ledger.house_account(name="table:T1", currency=wallet.currency_id, operator=wallet.operator_id)


def test_the_limit_is_ten_to_the_eleven_major_units():
    assert MONEY_LIMIT == Decimal(10) ** 11
    assert parse_amount(TOP, 2) == Decimal(TOP) and parse_amount("-" + TOP, 2, allow_negative=True) == -Decimal(TOP)
    assert parse_amount("99999999999.9999", 4) == Decimal("99999999999.9999")


@pytest.mark.parametrize("big", ["100000000000", "100000000000.00", "999999999999999.99", "1000000000000000",
                                 Decimal("1E+15"), 10 ** 11, "-100000000000.00"])
def test_amounts_from_the_limit_up_are_refused(big):
    with pytest.raises(InvalidAmount, match="too large"):
        parse_amount(big, 2, allow_negative=True)


def transfer_in(key, amount, transfer_id):
    response = Client(HTTP_AUTHORIZATION=f"Bearer {key}").post(
        "/api/operator/v1/transfers/", {"transfer_id": transfer_id, "player": "p1", "currency": "EUR",
                                        "amount": amount, "direction": "in"}, content_type="application/json")
    return response.status_code, response["Content-Type"], response.json()


def test_a_transfer_in_of_too_large_an_amount_is_a_400_and_moves_nothing():
    operator, key, players = operator_with_players("acme", ["p1"])
    status, content_type, answer = transfer_in(key, "999999999999999.99", "T-big")
    assert (status, content_type, answer.get("code")) == (400, "application/json", "invalid_amount")
    assert not LedgerTransaction.objects.filter(key__contains="T-big").exists()
