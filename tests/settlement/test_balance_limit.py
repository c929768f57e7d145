"""A settlement whose payout would bring a wallet to ``accounts.money.MONEY_LIMIT``: refused whole
(``BalanceLimit``), no bet of the round half-settled; the round stays RESULTED for the operators."""

import pytest

from accounts.exceptions import BalanceLimit
from accounts.models import Account, LedgerTransaction
from accounts.services import deposit
from settlement.services import settle_round
from tables.models import Round
from wagering.models import Bet

from .helpers import BETS, balance, played_round

pytestmark = pytest.mark.django_db


def test_a_payout_that_would_bring_a_wallet_to_the_limit_settles_nothing():
    round_, players = played_round(bets={"hit": BETS["hit"], "double": BETS["double"]})  # both win
    deposit(wallet=Account.objects.get(player=players["hit"], kind=Account.Kind.WALLET), amount="99999999900.00",
            key="dep:near")  # 99,999,999,990.00: the 20.00 return would pass the limit
    written, before = LedgerTransaction.objects.count(), balance(players["double"])
    with pytest.raises(BalanceLimit):
        settle_round(round_id=round_.pk)
    round_.refresh_from_db()
    assert round_.state == Round.State.RESULTED and LedgerTransaction.objects.count() == written
    assert balance(players["double"]) == before
    assert not Bet.objects.filter(round=round_, state=Bet.State.SETTLED).exists()
