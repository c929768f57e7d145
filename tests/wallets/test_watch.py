"""settlement.jobs.watch_wallets: a critical Alert per movement an operator's wallet keeps failing
(or refused for good), raised once, cleared when the movement is finally acknowledged."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from accounts.models import Operator
from accounts.operators import create_operator, upsert_player
from settlement.jobs import watch_wallets
from settlement.models import Alert
from tests.factories import CurrencyFactory
from wagering.selectors import has_open_bets
from wallets.models import WalletMovement

pytestmark = pytest.mark.django_db


@pytest.fixture
def movement():
    CurrencyFactory(code="EUR")
    operator, _ = create_operator(code="sea", wallet_mode=Operator.WalletMode.SEAMLESS, currencies=["EUR"],
                               wallet_url="http://127.0.0.1:1/wallet", wallet_secret="s" * 32)
    player = upsert_player(operator=operator, code="p1", currencies=["EUR"], has_open_bets=has_open_bets)[0]

    def make(key, **fields):
        return WalletMovement.objects.create(key=key, call="credit", kind="payout", operator=operator,
                                             player=player, currency_id="EUR", amount=Decimal("5.00"), **fields)
    return make


def test_a_movement_failing_past_the_limit_raises_one_alert_then_clears(movement, settings):
    settings.WALLET_ALERT_AFTER_SECONDS = 600
    now = timezone.now()
    old = movement("payout:r1:1", failing_since=now - timedelta(seconds=601), attempts=9, last_error="timeout")
    movement("payout:r1:2", failing_since=now - timedelta(seconds=599), attempts=8)  # not yet
    movement("payout:r1:3", state=WalletMovement.State.OK)

    assert watch_wallets(now=now) == (1, 0)
    alert = Alert.objects.get(kind=Alert.Kind.WALLET_FAILING)
    assert alert.severity == Alert.Severity.CRITICAL and alert.payload["movement"] == old.pk
    assert alert.player == old.player  # the operator's staff see it
    assert "sea's wallet" in alert.message and "timeout" in alert.message
    assert watch_wallets(now=now) == (0, 0)  # once per movement

    WalletMovement.objects.filter(pk=old.pk).update(state=WalletMovement.State.OK, failing_since=None)
    assert watch_wallets(now=now) == (0, 1)
    alert.refresh_from_db()
    assert alert.acknowledged_at is not None


def test_a_movement_refused_for_good_alerts_at_once(movement):
    movement("correction:r1:1", state=WalletMovement.State.FAILED, status="INSUFFICIENT_FUNDS", attempts=1)
    assert watch_wallets() == (1, 0)
    assert "refused" in Alert.objects.get().message
