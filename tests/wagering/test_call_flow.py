"""The call flow of docs/game-server-api.md, played as written: every request of its three
examples (classic, premium with its mirrored seat, boundless) against the game-server API, each
answering the status the document gives, and each round settling to the outcomes and returns of
its table. A change of the API that the document does not follow fails here."""

import json
import re
import textwrap
from pathlib import Path

import pytest

from settlement.services import settle_round
from tables.models import Studio, default_studio
from tests.factories import ClassicTableFactory, PremiumTableFactory, TableFactory, operator_with_players

from .conftest import studio_client
from .helpers import sit

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[2] / "docs" / "game-server-api.md"
#: A call: an indented block, ``METHOD path -> status`` and the JSON body, if any, below.
CALL = re.compile(r"^    (GET|POST) (\S+) -> (\d{3})\n((?:    .*\n)*)", re.M)
ROW = re.compile(r"^\| `([^`]+)` \| (\w+) \| ([0-9.]+) \|$", re.M)


def _examples():
    """``{variant: (calls, {record id: (outcome, returned)})}`` of the document's examples."""
    text = DOC.read_text()
    sections = re.split(r"^### ", text.split("## The examples", 1)[1], flags=re.M)[1:]
    return {section.split("\n", 1)[0].lower(): (
        [(method, path, int(status), json.loads(textwrap.dedent(body)) if body.strip() else None)
         for method, path, status, body in CALL.findall(section)],
        {bet: (outcome, returned) for bet, outcome, returned in ROW.findall(section)}) for section in sections}


EXAMPLES = _examples()


@pytest.fixture
def cast(db):
    """The document's cast: acme's anna, ben and cleo in live EUR sessions, and the three tables."""
    _, _, players = operator_with_players("acme", ["anna", "ben", "cleo"], funded="1000.00")
    tables = {"classic": ClassicTableFactory(code="CLASSIC-1"), "premium": PremiumTableFactory(code="PREMIUM-1"),
              "boundless": TableFactory(code="BOUNDLESS-1", variant="boundless")}
    sit(tables["premium"], 4, players["anna"])  # "since a round of the table's first shoe"
    return studio_client(Studio.objects.get(pk=default_studio()))


def test_the_document_has_its_three_examples():
    assert set(EXAMPLES) == {"classic", "premium", "boundless"}
    assert all(len(calls) >= 8 and len(results) == 4 for calls, results in EXAMPLES.values())


@pytest.mark.parametrize("variant", ["classic", "premium", "boundless"])
def test_a_round_played_as_the_document_writes_it(cast, variant):
    calls, results = EXAMPLES[variant]
    round_id = None
    for method, path, status, body in calls:
        url = path.replace("{round}", str(round_id))
        answer = cast.get(url) if method == "GET" else cast.post(url, body, format="json")
        assert answer.status_code == status, (method, url, answer.content[:500])
        if round_id is None:
            round_id = answer.json()["id"]
        if url.endswith("/result/"):
            assert answer.json()["state"] == "resulted"
            settle_round(round_id=round_id)  # as a worker does
    bets = {b["record_id"]: (b["outcome"], b["returned"]) for b in answer.json()["bets"]}
    assert bets == results
