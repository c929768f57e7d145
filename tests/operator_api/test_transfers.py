"""Transfers are idempotent on their transfer_id: a retry, one after another or many at once from
parallel connections, moves the money once and answers the same body every time."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client

from accounts.models import LedgerEntry, LedgerTransaction
from tests.factories import operator_with_players
from tests.wagering.test_concurrency import run_at_once

BODY = {"transfer_id": "T-42", "player": "p1", "currency": "EUR", "amount": "12.50", "direction": "in"}


def post_transfer(key, body=BODY):
    """POST ``body`` to transfers/ through the whole stack (Django's test client, no test
    transaction); returns ``(status, answer)``."""
    response = Client(HTTP_AUTHORIZATION=f"Bearer {key}").post("/api/operator/v1/transfers/", body,
                                                              content_type="application/json")
    return response.status_code, response.json()


def moved(operator):
    """``(transactions keyed transfer:<operator>:T-42, entries of them, the wallet's balance)``."""
    txns = LedgerTransaction.objects.filter(key=f"transfer:{operator.code}:T-42")
    wallet = operator.players.get(code="p1").wallets.get(currency="EUR")
    return txns.count(), LedgerEntry.objects.filter(transaction__in=txns).count(), wallet.balance


@pytest.mark.django_db
def test_ten_retries_one_after_another_move_the_money_once(db):
    operator, key, _ = operator_with_players("acme", ["p1"], funded="100.00")
    answers = [post_transfer(key) for _ in range(10)]
    assert [status for status, _ in answers] == [201] + [200] * 9
    assert len({str(sorted(answer.items())) for _, answer in answers}) == 1
    assert answers[0][1]["balance_after"] == "112.50"
    assert moved(operator) == (1, 2, Decimal("112.50"))


@pytest.mark.django_db(transaction=True)
def test_ten_retries_at_once_move_the_money_once_and_answer_alike():
    operator, key, _ = operator_with_players("acme", ["p1"], funded="100.00")
    results = run_at_once([lambda: post_transfer(key) for _ in range(10)])
    assert not [r for r in results if isinstance(r, Exception)], results
    assert sorted(status for status, _ in results) == [200] * 9 + [201]
    assert len({str(sorted(answer.items())) for _, answer in results}) == 1
    assert results[0][1]["balance_after"] == "112.50"
    assert moved(operator) == (1, 2, Decimal("112.50"))
    connection.close()


@pytest.mark.django_db(transaction=True)
def test_transfers_out_at_once_never_overdraw():
    """Ten different withdrawals of 30.00 from 100.00 at once: three go through, the others are
    insufficient_funds, and the wallet ends at 10.00."""
    operator, key, _ = operator_with_players("acme", ["p1"], funded="100.00")
    jobs = [(lambda i=i: post_transfer(key, {**BODY, "transfer_id": f"W-{i}", "amount": "30.00", "direction": "out"}))
            for i in range(10)]
    results = run_at_once(jobs)
    assert sorted(status for status, _ in results) == [201] * 3 + [409] * 7, results
    assert {answer["code"] for status, answer in results if status == 409} == {"insufficient_funds"}
    assert operator.players.get(code="p1").wallets.get(currency="EUR").balance == Decimal("10.00")
    connection.close()


@pytest.mark.django_db
def test_a_transfer_out_beyond_the_balance_names_nothing_internal():
    """Issue 20: its 409 named the posting key and the wallet's id and showed the balance with four
    decimals; it says what could not be covered, in the currency's minor units."""
    operator, key, _ = operator_with_players("acme", ["p1"], funded="3.00")
    status, answer = post_transfer(key, {**BODY, "amount": "5.00", "direction": "out"})
    assert (status, answer) == (409, {"code": "insufficient_funds",
                                      "detail": "the player's wallet cannot cover 5.00: nothing was moved"})
    assert moved(operator) == (0, 0, Decimal("3.00"))
