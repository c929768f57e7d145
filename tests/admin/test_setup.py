"""What a fresh install gives operators and integrators: the roles after ``migrate``, and the demo
accounts ``make run`` prints (``create_demo_users``) working on their APIs."""

import re
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command

from accounts.models import OperatorAPIKey
from adminkit.roles import DISPUTE_OFFICER, SUPERVISOR, VIEWER

pytestmark = pytest.mark.django_db


def test_migrate_creates_the_operator_roles():
    """The test database is built by ``migrate``: the roles must already be there."""
    assert {VIEWER, DISPUTE_OFFICER, SUPERVISOR} <= set(Group.objects.values_list("name", flat=True))


def test_demo_accounts_work_on_their_apis(client):
    out = StringIO()
    call_command("create_demo_users", stdout=out)
    player_token, server_token = re.findall(r"API token: (\w+)", out.getvalue())
    operator = get_user_model().objects.get(username="demo-operator")
    assert operator.groups.filter(name=SUPERVISOR).exists() and not hasattr(operator, "operator_staff")
    brand_staff = get_user_model().objects.get(username="north-supervisor")
    assert brand_staff.operator_staff.operator.code == "north" and not brand_staff.is_superuser
    key = re.search(r"Operator API key of north \(new each run\): (\S+)", out.getvalue()).group(1)
    assert OperatorAPIKey.objects.get_from_key(key).operator.code == "north"
    assert client.get("/api/v1/me", HTTP_AUTHORIZATION=f"Token {player_token}").status_code == 200
    missing = client.get("/api/game/v1/rounds/999999/", HTTP_AUTHORIZATION=f"Token {server_token}")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"  # allowed in: no 403
    refused = client.get("/api/game/v1/rounds/999999/", HTTP_AUTHORIZATION=f"Token {player_token}")
    assert refused.status_code == 403
