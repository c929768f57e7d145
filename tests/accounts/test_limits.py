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
from accounts.exceptions import BalanceLimit, InvalidAmount
from accounts.models import Currency, LedgerTransaction
from accounts.money import MONEY_LIMIT, TRANSFER_BALANCE_LIMIT, parse_amount
from accounts.reconcile import reconcile
from tables.models import Studio, default_studio
from tests.factories import BoundlessTableFactory, PlayerFactory, RoundFactory, operator_with_players
from tests.wagering.conftest import studio_client

pytestmark = pytest.mark.django_db
_codes = itertools.count()
TOP = "99999999999.99"  # the largest EUR amount
BOUND_SENTENCE = ("the player's wallet would reach the platform's bound on a balance, 100000000000.00 either way: "
                  "nothing was moved")


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


def posted(wallet):
    wallet.refresh_from_db()
    return wallet.balance, LedgerTransaction.objects.count()


@pytest.mark.parametrize("n", [1, 2, ledger.PREPARED_UP_TO + 1])  # one statement, prepared, bulk (PostgreSQL)
def test_a_credit_that_would_bring_a_wallet_to_the_limit_is_refused_whole(wallet, house, n):
    ledger.deposit(wallet=wallet, amount="99999999999.00", key="dep:top")
    # the first postings take money out, the last brings the balance back to exactly the limit
    postings = [ledger.Posting(f"stake:{i}", "stake", wallet, house, Decimal("1.00")) for i in range(n - 1)]
    postings.append(ledger.Posting("payout:x", "payout", house, wallet, Decimal(n)))
    with pytest.raises(BalanceLimit) as refused:
        ledger.post(postings)
    assert str(refused.value) == BOUND_SENTENCE  # no posting key, no wallet id, no balance; money as EUR shows it
    assert posted(wallet) == (Decimal("99999999999.00"), 1)
    ledger.post(postings[:-1] + [ledger.Posting("payout:y", "payout", house, wallet, n - Decimal("0.01"))])
    assert posted(wallet) == (Decimal(TOP), n + 1) and reconcile().ok


@pytest.mark.parametrize("n", [1, ledger.PREPARED_UP_TO + 1])
def test_a_reversal_may_not_bring_a_wallet_to_minus_the_limit(wallet, house, n):
    ledger.post([ledger.Posting("reverse:0", "reversal", wallet, house, Decimal(TOP))], allow_negative=True)
    postings = [ledger.Posting(f"reverse:{i + 1}", "reversal", wallet, house, Decimal("0.01")) for i in range(n)]
    with pytest.raises(BalanceLimit, match=BOUND_SENTENCE):
        ledger.post(postings, allow_negative=True)
    assert posted(wallet) == (-Decimal(TOP), 1)


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


def test_a_transfer_in_that_would_bring_a_wallet_to_the_limit_is_a_409_and_moves_nothing():
    operator, key, players = operator_with_players("acme", ["p1"])
    wallet = players["p1"].wallets.get(currency="EUR")
    ledger.deposit(wallet=wallet, amount=Decimal(TOP), key="won:top")  # as winnings bring it there
    status, content_type, answer = transfer_in(key, "0.01", "T-over")
    assert (status, content_type, answer.get("code")) == (409, "application/json", "balance_limit")
    assert answer["detail"]
    assert posted(wallet) == (Decimal(TOP), 1)
    assert transfer_in(key, "0.01", "T-over")[0] == 409  # the transfer id stays free: still refused


def test_a_transfer_in_leaves_the_rounds_room_below_the_limit():
    """A transfer in may bring a wallet below ``TRANSFER_BALANCE_LIMIT`` only (a tenth of the
    limit): the short fresh attack paid a wallet in to 99,999,999,999.99 with stakes open, and the
    round's payout, refused at the limit, held every other player's settlement."""
    operator, key, players = operator_with_players("acme", ["p1"])
    wallet = players["p1"].wallets.get(currency="EUR")
    top = TRANSFER_BALANCE_LIMIT - Decimal("0.01")
    assert transfer_in(key, str(top), "T-top")[0] == 201
    status, _, answer = transfer_in(key, "0.01", "T-past")
    assert (status, answer["code"]) == (409, "balance_limit")
    assert answer["detail"] == "a transfer in may bring a wallet below 10000000000.00, not to 10000000000.00"
    assert posted(wallet) == (top, 1)
    assert transfer_in(key, str(top), "T-top")[0] == 200  # its replay still answers


def test_a_cancel_whose_refund_would_bring_a_wallet_to_the_limit_names_nothing_internal():
    """Issue 20: the game server's 409 ``balance_limit`` named the posting and the wallet's id and
    showed the balance with four decimals; it says what was refused, in the currency's minor units."""
    player = PlayerFactory(funded="100.00")
    client = studio_client(Studio.objects.get(pk=default_studio()))
    round_ = RoundFactory(table=BoundlessTableFactory())
    assert client.post(f"/api/game/v1/rounds/{round_.pk}/bets/", {
        "key": "b1", "player": player.code, "type": "main", "stake": "10.00"}, format="json").status_code == 201
    wallet = player.wallets.get(currency="EUR")
    ledger.deposit(wallet=wallet, amount=Decimal(TOP) - Decimal("95.00"), key="won:near-top")
    before = posted(wallet)
    response = client.post(f"/api/game/v1/rounds/{round_.pk}/cancel/", {"reason": "fault"}, format="json")
    assert (response.status_code, response.json()) == (409, {"code": "balance_limit", "detail": BOUND_SENTENCE})
    assert posted(wallet) == before
