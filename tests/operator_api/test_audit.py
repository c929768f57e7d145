"""Who gets in, and the audit: a usable key's every call (answered, refused, throttled) writes one
OperatorAPICall naming the key, method, path and status; an unknown, revoked or expired key is a
401 with no data and, having named no usable key, no audit row."""

import logging
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import override_settings
from django.utils import timezone
from rest_framework.settings import api_settings
from rest_framework.test import APIClient

from accounts.models import OperatorAPICall
from accounts.operators import create_api_key, revoke_api_key
from tests.operator_api.conftest import calls, client_for_key, written

pytestmark = pytest.mark.django_db


def prefix(raw_key):
    return raw_key.split(".")[0]


def test_every_call_writes_one_audit_row_with_its_key_and_status(api, acme):
    key = prefix(acme[1])
    assert api.get("/api/operator/v1/players/p1").status_code == 200
    assert api.get("/api/operator/v1/players/nobody").status_code == 404
    assert api.post("/api/operator/v1/transfers/", {"amount": 1.5}, format="json").status_code == 400
    assert api.get("/api/operator/v1/statement/?cursor=bad").status_code == 400
    assert api.delete("/api/operator/v1/sessions/nope").status_code == 404
    assert calls() == [(key, "GET", "/api/operator/v1/players/p1", 200),
                       (key, "GET", "/api/operator/v1/players/nobody", 404),
                       (key, "POST", "/api/operator/v1/transfers/", 400),
                       (key, "GET", "/api/operator/v1/statement/", 400),
                       (key, "DELETE", "/api/operator/v1/sessions/(token)", 404)]
    assert set(OperatorAPICall.objects.values_list("operator__code", flat=True)) == {"acme"}
    assert all(call.at <= timezone.now() for call in OperatorAPICall.objects.all())


def test_each_key_is_audited_as_itself(acme, bolt):
    _, second = create_api_key(operator=acme[0], name="second")
    client_for_key(second).get("/api/operator/v1/players/p1")
    client_for_key(bolt[1]).get("/api/operator/v1/players/p1")
    assert [(p, status) for p, _, _, status in calls()] == [(prefix(second), 200), (prefix(bolt[1]), 200)]


@pytest.mark.parametrize("header, code", [
    (None, "not_authenticated"),
    ("Bearer", "authentication_failed"),
    ("Bearer a b", "authentication_failed"),
    ("Bearer nope", "authentication_failed"),
    ("Bearer abcdefgh.0123456789abcdef0123456789abcdef", "authentication_failed"),
    ("Token 0123456789", "not_authenticated"),
])
def test_no_usable_key_is_a_401_with_no_data_and_no_audit_row(acme, header, code):
    client = APIClient()
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    before = written()
    response = client.get("/api/operator/v1/players/p1")
    assert response.status_code == 401 and response.json()["code"] == code and set(response.json()) == {
        "code", "detail"}
    assert response["WWW-Authenticate"] == "Bearer"
    assert written() == before and not OperatorAPICall.objects.exists()


def test_a_revoked_key_is_refused_at_once(api, acme):
    assert api.get("/api/operator/v1/players/p1").status_code == 200
    revoke_api_key(key=acme[0].api_keys.get())
    before = written()
    for method, path, body in (("get", "/api/operator/v1/players/p1", None),
                               ("post", "/api/operator/v1/transfers/", {"transfer_id": "T-1", "player": "p1",
                                                                        "currency": "EUR", "amount": "1.00",
                                                                        "direction": "in"}),
                               ("get", "/api/operator/v1/statement/", None)):
        response = getattr(api, method)(path, body, format="json") if body else getattr(api, method)(path)
        assert response.status_code == 401 and response.json() == {
            "code": "authentication_failed", "detail": "Invalid, revoked or expired API key."}
    assert written() == before and len(calls()) == 1  # the call made before the revoke


def test_an_expired_key_is_refused(api, acme):
    acme[0].api_keys.update(expiry_date=timezone.now() - timedelta(seconds=1))
    response = api.get("/api/operator/v1/players/p1")
    assert response.status_code == 401 and response.json()["code"] == "authentication_failed"


def test_throttled_per_key_and_the_refusals_audited(api, acme, bolt_api):
    rates = {**api_settings.DEFAULT_THROTTLE_RATES, "operator": "3/min"}
    with override_settings(REST_FRAMEWORK={**api_settings.user_settings, "DEFAULT_THROTTLE_RATES": rates}):
        cache.clear()
        assert [api.get("/api/operator/v1/players/p1").status_code for _ in range(4)] == [200, 200, 200, 429]
        refused = api.get("/api/operator/v1/players/p1")
        assert refused.json()["code"] == "throttled" and 1 <= int(refused["Retry-After"]) <= 60
        assert bolt_api.get("/api/operator/v1/players/p1").status_code == 200  # per key
    cache.clear()
    assert [status for _, _, _, status in calls()] == [200, 200, 200, 429, 429, 200]


def test_the_default_rate_is_1200_a_minute():
    assert api_settings.DEFAULT_THROTTLE_RATES["operator"] == "1200/min"


def test_a_session_token_in_the_path_is_kept_out_of_the_audit(api):
    """``DELETE sessions/{token}`` carries the player's credential in its path: the audit row names
    the route with the token redacted, answered or refused; ``POST sessions/end`` carries it in its
    body and its path is kept as it is."""
    token = api.post("/api/operator/v1/sessions/", {"player": "p1", "currency": "EUR"}, format="json").json()["token"]
    assert api.delete(f"/api/operator/v1/sessions/{token}").status_code == 204
    assert api.delete(f"/api/operator/v1/sessions/{token}?x=1").status_code == 400
    assert api.post("/api/operator/v1/sessions/end", {"token": token}, format="json").status_code == 204
    assert [(method, path, status) for _, method, path, status in calls()] == [
        ("POST", "/api/operator/v1/sessions/", 201),
        ("DELETE", "/api/operator/v1/sessions/(token)", 204),
        ("DELETE", "/api/operator/v1/sessions/(token)", 400),
        ("POST", "/api/operator/v1/sessions/end", 204)]
    assert not OperatorAPICall.objects.filter(path__contains=token[:20]).exists()


def test_a_session_token_in_the_path_is_kept_out_of_the_request_log(api, caplog):
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert api.delete("/api/operator/v1/sessions/secret-token-1").status_code == 404
        assert api.get("/api/operator/v1/sessions/secret-token-2/").status_code == 404  # no route: the JSON 404
    messages = [record.getMessage() for record in caplog.records]
    assert messages == ["Not Found: /api/operator/v1/sessions/(token)", "Not Found: /api/operator/v1/sessions/(token)/"]
