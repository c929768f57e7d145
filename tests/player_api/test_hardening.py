"""The player API under hostile input: JSON errors only, real time zones, ordered date ranges."""

import base64
import json

import pytest
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("tz", ["localtime", "Factory", "posixrules", "0%25s", "50%25"])  # a % in the message
def test_only_real_iana_time_zones(api, tz):
    response = api.get(f"/api/v1/bets/?tz={tz}")
    assert response.status_code == 400 and response.json()["code"] == "invalid_input", response.content


@pytest.mark.parametrize("tz", ["UTC", "Europe/Berlin", "America/New_York"])
def test_real_time_zones_are_fine(api, tz):
    assert api.get(f"/api/v1/bets/?tz={tz}").status_code == 200


def test_date_from_after_date_to_is_invalid_input(api):
    response = api.get("/api/v1/bets/?date_from=2026-03-02&date_to=2026-03-01")
    assert response.status_code == 400 and response.json()["code"] == "invalid_input"
    assert "date_from" in response.json()["detail"]
    assert api.get("/api/v1/bets/?date_from=2026-03-01&date_to=2026-03-01").status_code == 200


@pytest.mark.parametrize("path", ["/api/v1/nope", "/api/v1/me/", "/api/v1/bets/x/y", "/api/v1/disputes/1/"])
def test_unknown_paths_are_json_404(api, path):
    response = api.get(path)
    assert response.status_code == 404 and response["Content-Type"].startswith("application/json")
    assert response.json()["code"] == "not_found" and response.json()["detail"]


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_path_without_its_slash_is_a_json_404_naming_it_not_a_redirect(api, method):
    """APPEND_SLASH would redirect (a POST then comes back as a GET and the dispute is lost; under
    DEBUG Django refuses with a 500). CSRF checks on, as for a real client with a token."""
    client = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=api._credentials["HTTP_AUTHORIZATION"])
    response = getattr(client, method)("/api/v1/disputes", {"bets": [1], "reason": "x"},
                                       content_type="application/json")
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert "/api/v1/disputes/" in response.json()["detail"]
    assert api.get("/api/v1/nope").json()["detail"] == "Not found."


@override_settings(DEBUG=True)
def test_unknown_api_paths_are_json_even_under_debug(api):
    response = api.get("/api/game/v1/tables/%C3%A9/nope")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_deeply_nested_json_is_invalid_input(api):
    deep = "[" * 100_000 + "]" * 100_000
    response = api.post("/api/v1/disputes/", deep, content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_input"


def _cursor(direction, position):
    return base64.urlsafe_b64encode(json.dumps([direction, position]).encode()).decode().rstrip("=")


@pytest.mark.parametrize("placed_at", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00",
                                       "2026-11-30T17:58:24"])
def test_a_forged_cursor_outside_the_range_of_times_or_without_a_zone_is_invalid_input(api, placed_at):
    """Cursors are the paginator's own (aware times, years 1-9999); a rewritten one is a 400."""
    response = api.get(f"/api/v1/bets/?cursor={_cursor('n', [placed_at, 5])}")
    assert response.status_code == 400 and response.json()["code"] == "invalid_input", response.content
    assert api.get(f"/api/v1/bets/?cursor={_cursor('n', ['2026-11-30T17:58:24+00:00', 5])}").status_code == 200


@pytest.mark.parametrize("body", [{"bets": [1], "reason": "ok", "x\x00": 1}, {"bets": [["a\x00"]], "reason": "ok"}])
def test_a_nul_anywhere_in_a_body_is_invalid_input(api, body):
    from settlement.models import Dispute
    response = api.post("/api/v1/disputes/", body, format="json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_input", response.content
    assert "must not contain NUL characters" in response.json()["detail"]
    assert not Dispute.objects.exists()


def test_a_nul_in_a_query_parameter_is_invalid_input(api):
    response = api.get("/api/v1/bets/?tz=UT%00C")
    assert response.status_code == 400 and "NUL" in response.json()["detail"], response.content


def test_a_dispute_body_refuses_keys_it_does_not_read(api):
    """As every API body: a key the call does not read is named and refused (its schema says
    ``additionalProperties: false``), so that no schema-valid body is refused for a stray key."""
    from settlement.models import Dispute
    response = api.post("/api/v1/disputes/", {"bets": [1], "reason": "wrong card", "extra": 1}, format="json")
    assert response.status_code == 400 and "extra: unknown field" in response.json()["detail"], response.content
    assert not Dispute.objects.exists()
