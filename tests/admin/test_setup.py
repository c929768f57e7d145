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
from tables.models import StudioAPIKey

pytestmark = pytest.mark.django_db


def test_migrate_creates_the_operator_roles():
    """The test database is built by ``migrate``: the roles must already be there."""
    assert {VIEWER, DISPUTE_OFFICER, SUPERVISOR} <= set(Group.objects.values_list("name", flat=True))


def test_demo_accounts_work_on_their_apis(client):
    out = StringIO()
    call_command("create_demo_users", stdout=out)
    (player_token,) = re.findall(r"API token: (\w+)", out.getvalue())
    server_key = re.search(r"Game-server API key of studio default \(demo-game-server, new each run\): (\S+)",
                           out.getvalue()).group(1)
    operator = get_user_model().objects.get(username="demo-operator")
    assert operator.groups.filter(name=SUPERVISOR).exists() and not hasattr(operator, "operator_staff")
    brand_staff = get_user_model().objects.get(username="north-supervisor")
    assert brand_staff.operator_staff.operator.code == "north" and not brand_staff.is_superuser
    key = re.search(r"Operator API key of north \(new each run\): (\S+)", out.getvalue()).group(1)
    assert OperatorAPIKey.objects.get_from_key(key).operator.code == "north"
    assert client.get("/api/v1/me", HTTP_AUTHORIZATION=f"Token {player_token}").status_code == 200
    assert StudioAPIKey.objects.get_from_key(server_key).studio.code == "default"
    missing = client.get("/api/game/v1/rounds/999999/", HTTP_AUTHORIZATION=f"Bearer {server_key}")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"  # allowed in: no 401
    refused = client.get("/api/game/v1/rounds/999999/", HTTP_AUTHORIZATION=f"Token {player_token}")
    assert refused.status_code == 401
    call_command("create_demo_users", stdout=StringIO())  # a new run: the last run's game-server key is revoked
    assert client.get("/api/game/v1/tables/", HTTP_AUTHORIZATION=f"Bearer {server_key}").status_code == 401


def test_the_superuser_sees_no_raw_key_on_any_page(client):
    """DRF's token page (every token's raw key) is not in the admin; a game-server key's page shows
    its prefix only (the key is shown once, when created; its hash and signing secret never)."""
    from tables.studios import create_service_key
    from tests.factories import UserFactory, otp_login

    admin = UserFactory(is_staff=True, is_superuser=True)
    otp_login(client, admin)
    key, raw, secret = create_service_key(studio="default", name="studio-a", signed=True)
    assert client.get("/admin/authtoken/tokenproxy/").status_code == 404
    for url in ("/admin/tables/studioapikey/", f"/admin/tables/studioapikey/{key.prefix}/change/",
                f"/admin/tables/studioapikey/{key.prefix}/history/"):
        response = client.get(url)
        page = response.content.decode()
        assert response.status_code == 200, url
        assert key.prefix in page and raw not in page and secret not in page and key.hashed_key not in page, url
