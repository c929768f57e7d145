"""The dashboard (the admin's index, settlement.dashboard): the day's and week's money, the last 30
days, rounds per hour, open disputes by age, active alerts by severity, rounds and wallet movements
to look at, the RTP watch; operator staff see only their operator's."""

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from adminkit.roles import VIEWER
from settlement import rtp_watch
from settlement.dashboard import build
from settlement.models import Alert, Dispute
from tests.admin.conftest import staff_of, two_operators
from tests.factories import otp_login
from wallets.models import WalletMovement

pytestmark = pytest.mark.django_db


@pytest.fixture
def ab(db):
    return two_operators()


def _chart(page):
    return json.loads(page.split('id="dashboard-chart-data" type="application/json">')[1].split("</script>")[0])


def test_the_provider_sees_every_operator(client, ab):
    rtp_watch.watch()
    Dispute.objects.filter(pk=ab.b_dispute.pk).update(created_at=timezone.now() - timedelta(days=8))
    otp_login(client, ab.provider)
    page = client.get("/admin/").content.decode()
    assert 'id="dashboard"' in page and "Wagering" in page  # the dashboard above Django's index
    board = build(operator_id=None, zone=timezone.get_current_timezone())
    assert board.money["EUR"]["today"] == (Decimal("60.00"), board.money["EUR"]["today"][1])
    assert board.money["EUR"]["week"] == board.money["EUR"]["today"]
    assert dict(board.disputes) == {"under an hour": 1, "1 to 24 hours": 0, "1 to 7 days": 0, "over 7 days": 1}
    assert board.alerts == {"info": 0, "warning": 3, "critical": 0}
    assert sum(n for _, n in board.rounds_per_hour) == 2
    assert {line["figure"].table_id for line in board.rtp} == {ab.shared.table_id, ab.b_round.table_id}
    assert _chart(page)["datasets"][0]["data"][-1] == 60.0
    assert 'id="rtp-watch"' in page and ab.shared.table.code in page


def test_operator_staff_see_their_operator_only(client, ab):
    WalletMovement.objects.create(key="m1", call="credit", kind="payout", operator=ab.b, player=ab.beta[0],
                                  currency_id="EUR", amount=Decimal("1.00"), state="failed")
    Alert.objects.create(kind=Alert.Kind.WALLET_FAILING, severity=Alert.Severity.CRITICAL, player=ab.beta[0],
                         message="beta's wallet failing")
    otp_login(client, staff_of(ab.a, VIEWER, "alpha_viewer"))
    page = client.get("/admin/").content.decode()
    assert 'id="dashboard"' in page and 'id="rtp-watch"' not in page
    board = build(operator_id=ab.a.pk, zone=ab.a.time_zone)
    assert board.money["EUR"]["today"] == (Decimal("20.00"), board.money["EUR"]["today"][1])
    assert dict(board.disputes)["under an hour"] == 1 and board.alerts["critical"] == 0
    assert board.wallet == {"pending": 0, "failing": 0, "failed": 0} and board.rtp is None
    assert sum(n for _, n in board.rounds_per_hour) == 1  # the shared round; B's own is B's
    assert _chart(page)["datasets"][0]["data"][-1] == 20.0
    b_board = build(operator_id=ab.b.pk, zone=ab.b.time_zone)
    assert b_board.wallet["failed"] == 1 and b_board.alerts["critical"] == 1
