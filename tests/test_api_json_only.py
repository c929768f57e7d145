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
