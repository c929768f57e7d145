"""Operators acknowledge alerts from the admin: Supervisors only, with a reason, audited, and a
double submit changes nothing (issue 6 operator actions; the RTP watch reopens after an ack)."""

import pytest

from settlement.alerts import acknowledge_alerts
from settlement.exceptions import ReasonRequired
from settlement.models import Alert, OperatorAction
from tests.factories import otp_login

pytestmark = pytest.mark.django_db
URL = "/admin/settlement/alert/"


def open_alerts(n):
    return [Alert.objects.create(kind=Alert.Kind.SETTLEMENT_FAILED, message=f"round {i} failed") for i in range(n)]


def acknowledge(client, user, alerts, reason):
    otp_login(client, user)
    return client.post(URL, {"action": "acknowledge", "reason": reason,
                             "_selected_action": [a.pk for a in alerts]}, follow=True)


def test_a_supervisor_acknowledges_with_a_reason_once(client, supervisor):
    alerts = open_alerts(2)
    response = acknowledge(client, supervisor, alerts, "studio fault confirmed, rounds voided")
    assert "2 alert(s) acknowledged" in response.content.decode()
    assert all(a.acknowledged_by == supervisor for a in Alert.objects.all())
    assert OperatorAction.objects.filter(action="acknowledge_alert", actor=supervisor).count() == 2
    first = list(Alert.objects.values_list("acknowledged_at", flat=True))
    acknowledge(client, supervisor, alerts, "again")  # double submit
    assert list(Alert.objects.values_list("acknowledged_at", flat=True)) == first
    assert OperatorAction.objects.filter(action="acknowledge_alert").count() == 2


def test_no_reason_no_acknowledgement(client, supervisor):
    alerts = open_alerts(1)
    response = acknowledge(client, supervisor, alerts, "  ")
    assert "Nothing acknowledged" in response.content.decode()
    assert Alert.objects.get().acknowledged_at is None
    with pytest.raises(ReasonRequired):
        acknowledge_alerts(alert_ids=[alerts[0].pk], reason="", actor=supervisor)


def test_a_viewer_cannot_acknowledge(client, viewer):
    alerts = open_alerts(1)
    otp_login(client, viewer)
    assert "acknowledge" not in client.get(URL).content.decode().split('name="action"')[-1][:400]
    acknowledge(client, viewer, alerts, "not mine to do")
    assert Alert.objects.get().acknowledged_at is None and not OperatorAction.objects.exists()
