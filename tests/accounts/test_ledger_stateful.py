"""Random sequences of deposits, stakes, returns, refunds, adjustments and replayed keys, with the
reconcile invariants and a model of every balance checked after every step (hypothesis)."""

import itertools
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from accounts import services as ledger
from accounts.exceptions import IdempotencyConflict, InsufficientFunds
from accounts.models import Currency
from accounts.reconcile import reconcile

_ids = itertools.count()
amounts = st.integers(min_value=1, max_value=50_000).map(lambda cents: Decimal(cents).scaleb(-2))


class LedgerMachine(RuleBasedStateMachine):
    @initialize()
    def setup(self):
        run = next(_ids)
        eur = Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})[0]
        self.house = ledger.house_account(name=f"table:S{run}", currency=eur, operator=ledger.default_operator())
        self.wallets, self.model, self.done = [], [], []
        for i in range(3):
            user = get_user_model().objects.create(username=f"sm-{run}-{i}")
            player = ledger.create_player(user=user, code=f"sm-{run}-{i}")
            self.wallets.append(ledger.wallet_for(player=player, currency=eur))
            self.model.append(Decimal(0))
        self.keys = (f"sm{run}:{n}" for n in itertools.count())

    def _post(self, fn, i, amount, delta):
        key = next(self.keys)
        try:
            fn(wallet=self.wallets[i], house=self.house, amount=amount, key=key)
        except InsufficientFunds:
            assert self.model[i] + delta < 0
            return
        assert self.model[i] + delta >= 0
        self.model[i] += delta
        self.done.append((fn, i, amount, key))

    @rule(i=st.integers(0, 2), amount=amounts)
    def deposit(self, i, amount):
        self._post(lambda house, **kw: ledger.deposit(**kw), i, amount, amount)

    @rule(i=st.integers(0, 2), amount=amounts)
    def stake(self, i, amount):
        self._post(ledger.post_stake, i, amount, -amount)

    @rule(i=st.integers(0, 2), amount=amounts)
    def payout(self, i, amount):
        self._post(ledger.post_return, i, amount, amount)

    @rule(i=st.integers(0, 2), amount=amounts)
    def refund(self, i, amount):
        self._post(ledger.refund, i, amount, amount)

    @rule(i=st.integers(0, 2), amount=amounts, credit=st.booleans())
    def adjust(self, i, amount, credit):
        self._post(ledger.post_adjustment, i, amount if credit else -amount, amount if credit else -amount)

    @precondition(lambda self: self.done)
    @rule(data=st.data())
    def replay_a_key(self, data):
        fn, i, amount, key = data.draw(st.sampled_from(self.done))
        fn(wallet=self.wallets[i], house=self.house, amount=amount, key=key)  # moves nothing
        with pytest.raises(IdempotencyConflict):
            fn(wallet=self.wallets[i], house=self.house, amount=amount * 2, key=key)  # never zero, never equal

    @invariant()
    def balances_match_the_model_and_the_ledger_reconciles(self):
        if not hasattr(self, "wallets"):
            return
        for wallet, expected in zip(self.wallets, self.model):
            wallet.refresh_from_db()
            assert wallet.balance == expected
        report = reconcile()
        assert report.ok, report.breaches


@pytest.mark.django_db
def test_ledger_state_machine():
    run_state_machine_as_test(LedgerMachine, settings=settings(
        max_examples=25, stateful_step_count=15, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]))
