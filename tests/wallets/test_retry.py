"""A supervisor's retry of a seamless movement (``wallets.port.retry``): a FAILED one is sent again,
a failing one waiting for its backoff is due at once, each then delivered against the reference
wallet exactly once; anything else (a stake debit, an acknowledged movement, one not failing, one
being sent) is refused with ``NotRetryable`` and left as it was."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from tests.operator_wallet.sandbox import SECRET
from tests.wallets.seamless import adjustment, attempt, failing_credit, seamless_operator
from wallets import outbox
from wallets.client import transaction_id
from wallets.exceptions import NotRetryable
from wallets.models import WalletMovement
from wallets.port import retry

pytestmark = pytest.mark.django_db
State = WalletMovement.State


@pytest.fixture
def player(wallet):
    return seamless_operator("sea", wallet.url)[1]["p1"]


def test_a_correction_refused_for_funds_is_sent_again_and_applied_once(wallet, player):
    wallet.set_player(player="p1", currency="EUR", balance="2.00")
    correction = adjustment(player, "-5.00", "take-back")
    attempt()
    correction.refresh_from_db()
    assert (correction.state, correction.status) == (State.FAILED, "INSUFFICIENT_FUNDS")

    wallet.set_player(player="p1", currency="EUR", balance="50.00")  # the operator tops the player up
    movement, was = retry(correction.pk)
    assert was == State.FAILED and movement.state == State.PENDING and movement.next_attempt_at <= timezone.now()
    outbox.deliver()
    correction.refresh_from_db()
    assert correction.state == State.OK and correction.attempts == 2
    assert wallet.balance_of("p1") == "45.00"
    assert wallet.state()["counters"]["applied_twice"] == 0


def test_a_failing_movement_waiting_for_its_backoff_is_due_now(sandbox, wallet, player):
    wallet.faults(down=True)
    credit = failing_credit(player, "goodwill")
    assert credit.next_attempt_at > timezone.now() + timedelta(seconds=50)  # 60 s after 7 attempts
    outbox.deliver()
    assert WalletMovement.objects.get(pk=credit.pk).attempts == 7  # not due: nothing sent

    wallet.faults(down=False)
    movement, was = retry(credit.pk)
    assert was == State.PENDING and movement.next_attempt_at <= timezone.now()
    outbox.deliver()
    credit.refresh_from_db()
    assert credit.state == State.OK and credit.attempts == 8 and credit.failing_since is None
    assert credit.leased_until is None  # the lease ended with the attempt
    assert wallet.balance_of("p1") == "1005.00"
    assert wallet.state()["transactions"][transaction_id(credit.key)]["amount"] == "5.00"


def test_retrying_twice_sends_the_movement_once_more_and_pays_once(wallet, player):
    wallet.faults(down=True)
    credit = failing_credit(player, "twice", attempts=1)
    wallet.faults(down=False)
    retry(credit.pk)
    retry(credit.pk)  # a double submit: still due now
    outbox.deliver()
    with pytest.raises(NotRetryable, match="acknowledged"):
        retry(credit.pk)
    assert WalletMovement.objects.get(pk=credit.pk).attempts == 2
    assert wallet.balance_of("p1") == "1005.00"


def _unchanged(movement):
    fields = ("state", "next_attempt_at", "attempts", "leased_until", "failing_since")
    return {f: getattr(WalletMovement.objects.get(pk=movement.pk), f) for f in fields}


@pytest.mark.parametrize("case, why", [
    ("acknowledged", "has acknowledged it"),
    ("not failing", "has not failed"),
    ("being sent", "being sent at this moment"),
    ("stake refused", "a stake debit is sent once"),
    ("stake unknown", "a stake debit is sent once"),
    ("stake failed", "a stake debit is sent once"),
])
def test_what_cannot_be_sent_again_is_refused_and_left_as_it_was(wallet, player, case, why):
    now = timezone.now()
    credit = adjustment(player, "5.00", "refused")
    stake = {"key": "stake:1:b1", "call": "debit", "kind": "stake", "amount": Decimal("10.00"),
             "operator": player.operator, "player": player, "currency_id": "EUR", "attempts": 1}
    movement = {
        "acknowledged": lambda: (attempt(), credit)[1],
        "not failing": lambda: credit,
        "being sent": lambda: WalletMovement.objects.filter(pk=credit.pk).update(
            failing_since=now, attempts=1, leased_until=now + timedelta(seconds=5)) and credit,
        "stake refused": lambda: WalletMovement.objects.create(**stake, state=State.REFUSED, status="PLAYER_BLOCKED"),
        "stake unknown": lambda: WalletMovement.objects.create(**stake, state=State.UNKNOWN, last_error="HTTP 503"),
        "stake failed": lambda: WalletMovement.objects.create(**stake, state=State.FAILED,
                                                              status="DUPLICATE_TRANSACTION"),
    }[case]()
    before = _unchanged(movement)
    with pytest.raises(NotRetryable, match=why):
        retry(movement.pk)
    assert _unchanged(movement) == before


def test_a_lease_left_by_a_deliverer_that_died_does_not_stop_a_retry(wallet, player):
    wallet.faults(down=True)
    credit = failing_credit(player, "orphan", attempts=1)
    WalletMovement.objects.filter(pk=credit.pk).update(leased_until=timezone.now() - timedelta(seconds=1))
    wallet.faults(down=False)
    assert retry(credit.pk)[1] == State.PENDING
    outbox.deliver()
    assert WalletMovement.objects.get(pk=credit.pk).state == State.OK


def test_an_unknown_movement_is_not_retried(db):
    with pytest.raises(NotRetryable, match="no wallet movement 999"):
        retry(999)


def test_a_wrong_secret_fails_the_movement_with_its_reason_until_it_is_put_right(wallet):
    operator, players = seamless_operator("sea", wallet.url, secret="not-the-secret")
    credit = failing_credit(players["p1"], "signed", attempts=2)
    assert credit.last_error == "HTTP 401" and credit.failing_since is not None
    assert [c.http_status for c in credit.calls.all()] == [401, 401]
    operator.wallet_secret = SECRET
    operator.save(update_fields=["wallet_secret"])
    retry(credit.pk)
    outbox.deliver()
    assert WalletMovement.objects.get(pk=credit.pk).state == State.OK
