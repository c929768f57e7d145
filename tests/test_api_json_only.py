"""Every API (game server, player, operator) answers JSON only, errors included, whatever the
request's ``Accept`` or ``?format=`` asks for: never DRF's browsable HTML pages."""

import pytest
from rest_framework.test import APIClient

from tables.models import Studio, default_studio
from tests.factories import PlayerFactory, operator_with_players
from tests.operator_api.conftest import client_for_key
from tests.wagering.conftest import client_for, studio_client

pytestmark = pytest.mark.django_db


def _clients():
    """``{api: (authenticated client, URL of a list, URL of a row that is not there)}``."""
    return {
        "game": (studio_client(Studio.objects.get(pk=default_studio())), "/api/game/v1/tables/",
                 "/api/game/v1/rounds/99999/"),
        "player": (client_for(PlayerFactory(code="alice").user), "/api/v1/bets/", "/api/v1/bets/99999"),
        "operator": (client_for_key(operator_with_players("acme", ["p1"])[1]), "/api/operator/v1/bets/",
                     "/api/operator/v1/rounds/99999"),
    }


@pytest.mark.parametrize("api", ["game", "player", "operator"])
def test_an_api_answers_json_when_html_is_asked_for(api):
    client, listing, missing = _clients()[api]
    for url, status, caller in ((listing, 200, client), (missing, 404, client), (listing, 401, APIClient())):
        for query in ("", "?format=api"):
            response = caller.get(url + query, HTTP_ACCEPT="text/html")
            assert response["Content-Type"] == "application/json", (url + query, response["Content-Type"])
            assert response.status_code == status or query and response.status_code == 400, (url + query, status)
            assert b"Django REST framework" not in response.content


@pytest.mark.parametrize("method, url", [("get", "/api/game/v1/tables/"), ("post", "/api/game/v1/rounds/1/bets/"),
                                         ("get", "/api/v1/bets/"), ("get", "/api/operator/v1/bets/"),
                                         ("get", "/api/nowhere/")])
@pytest.mark.parametrize("debug", [False, True])
def test_a_host_not_allowed_is_a_json_400_that_says_the_host_was_refused(client, settings, method, url, debug):
    settings.ALLOWED_HOSTS, settings.DEBUG = ["backoffice.example.com"], debug
    response = getattr(client, method)(url, HTTP_HOST="elsewhere.example.net")
    assert (response.status_code, response["Content-Type"]) == (400, "application/json")
    body = response.json()
    assert body["code"] == "host_refused" and "Host" in body["detail"] and "ALLOWED_HOSTS" in body["detail"]
    assert b"backoffice.example.com" not in response.content  # the hosts served are not told


def test_a_host_not_allowed_is_djangos_400_page_in_the_admin(client, settings):
    settings.ALLOWED_HOSTS = ["backoffice.example.com"]
    assert client.get("/admin/", HTTP_HOST="elsewhere.example.net").status_code == 400
    assert client.post("/admin/login/", {"username": "x"}, HTTP_HOST="elsewhere.example.net").status_code == 400
