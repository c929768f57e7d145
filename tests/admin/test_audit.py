"""The audit trail is immutable like the ledger, and holds the admin's sign-ins, failed sign-ins,
CSV exports and pay-table edits."""


import pytest
from django.db import connection, transaction
from django.urls import reverse

from accounts.models import OperatorStaff
from adminkit.roles import SUPERVISOR, VIEWER
from settlement.disputes import manual_adjustment
from settlement.models import OperatorAction
from tests.factories import (
    OPERATOR_PASSWORD,
    PlayerFactory,
    make_operator,
    otp_login,
    totp_code,
    totp_device,
)

pytestmark = pytest.mark.django_db


def _action():
    player = PlayerFactory(funded="10.00")
    manual_adjustment(player=player, currency="EUR", amount="1.00", reason="goodwill", actor=make_operator(SUPERVISOR),
                      key="k")
    return OperatorAction.objects.get()


def test_audit_rows_refuse_save_and_delete():
    action = _action()
    action.reason = "nothing happened"
    with pytest.raises(TypeError, match="immutable"):
        action.save()
    with pytest.raises(TypeError, match="immutable"):
        action.delete()
    assert OperatorAction.objects.get().reason == "goodwill"


@pytest.mark.postgresql
def test_audit_rows_cannot_be_changed_in_the_database():
    action = _action()
    for sql in ("UPDATE settlement_operatoraction SET reason = 'x' WHERE id = %s",
                "DELETE FROM settlement_operatoraction WHERE id = %s"):
        with pytest.raises(Exception, match="immutable"), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(sql, [action.pk])
    assert OperatorAction.objects.get().reason == "goodwill"


def test_sign_ins_and_failed_sign_ins_are_audited(client):
    user = make_operator(VIEWER)
    client.post("/admin/login/", {"username": user.username, "password": "not-the-password"})
    client.post("/admin/login/", {"username": "nobody-at-all", "password": "not-the-password"})
    client.post("/admin/login/", {"username": user.username, "password": OPERATOR_PASSWORD,
                                  "otp_token": totp_code(totp_device(user))})
    rows = list(OperatorAction.objects.order_by("id").values_list("action", "actor_label", "target_pk"))
    assert rows == [("login_failed", f"login:{user.username}", str(user.pk)),
                    ("login_failed", "login:nobody-at-all", "?"),
                    ("login", f"operator:{user.username}", str(user.pk))]
    assert OperatorAction.objects.get(action="login").payload["address"] == "127.0.0.1"


def test_an_operators_staff_sign_in_is_that_operators_row(client):
    player = PlayerFactory()
    user = make_operator(VIEWER)
    OperatorStaff.objects.create(user=user, operator=player.operator)
    client.post("/admin/login/", {"username": user.username, "password": OPERATOR_PASSWORD,
                                  "otp_token": totp_code(totp_device(user))})
    assert OperatorAction.objects.get(action="login").operator == player.operator


def test_csv_exports_are_audited(client):
    user = make_operator(VIEWER)
    response = otp_login(client, user).get(reverse("admin:wagering_bet_export"), {"outcome": "win"})
    b"".join(response.streaming_content)
    action = OperatorAction.objects.get(action="export_csv")
    assert (action.actor, action.target_model, action.payload["query"]) == (user, "wagering.bet", "outcome=win")
