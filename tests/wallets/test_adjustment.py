"""A manual adjustment (a dispute's or an operator's) of a seamless player is tied to no round: its
call names none (``round`` and ``table`` null, docs/wallet-api.md 8.7), and the reference wallet
applies it."""

import pytest

from tests.wallets.seamless import adjustment, seamless_operator
from wallets import outbox
from wallets.client import transaction_id
from wallets.models import WalletMovement

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("amount, call, balance", [("5.00", "credit", "1005.00"), ("-5.00", "debit", "995.00")])
def test_an_adjustment_of_a_seamless_player_reaches_the_operators_wallet(wallet, amount, call, balance):
    player = seamless_operator("sea", wallet.url)[1]["p1"]
    movement = adjustment(player, amount, "goodwill")
    outbox.deliver()
    movement.refresh_from_db()
    assert movement.state == WalletMovement.State.OK, movement.last_error
    applied = wallet.state()["transactions"][transaction_id(movement.key)]
    assert (applied["call"], applied["round"], applied["table"]) == (call, None, None)
    assert wallet.balance_of("p1") == balance
