"""The reports in the admin (the rollups: by day, table, operator, currency; CSV; the observed RTP
beside the theoretical): operator staff see only their operator's rows, the provider's staff all."""

import csv
import hashlib
import io
import json
from pathlib import Path

import pytest
from django.utils import timezone

from adminkit.roles import VIEWER
from tests.admin.conftest import staff_of, two_operators
from tests.factories import otp_login

pytestmark = pytest.mark.django_db

REPORT = "/admin/wagering/dailyrollup/"
CHART_JS = Path(__file__).resolve().parents[2] / "adminkit/static/adminkit/vendor/chartjs/chart.umd.min.js"


@pytest.fixture
def ab(db):
    return two_operators()


def _csv(client, query):
    response = client.get(f"{REPORT}?{query}&format=csv")
    assert response.status_code == 200 and response["Content-Type"] == "text/csv"
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_the_provider_sees_every_operator_with_totals_and_a_chart(client, ab):
    otp_login(client, ab.provider)
    page = client.get(f"{REPORT}?group=operator").content.decode()
    assert "brand-alpha" in page and "brand-beta" in page and 'class="total"' in page
    assert 'id="report-chart-data"' in page and "chart.umd.min.js" in page
    rows = {r["operator"]: r for r in _csv(client, "group=operator")}
    assert rows["brand-alpha"]["bets"] == "2" and rows["brand-beta"]["bets"] == "4"
    assert rows["brand-alpha"]["turnover"] == "20.00" and rows["brand-beta"]["rounds"] == "2"
    assert rows["total"]["bets"] == "6" and rows["total"]["rounds"] == "2" and rows["total"]["players"] == "4"
    assert rows["brand-alpha"]["adjustments"] == "1" and rows["total"]["adjusted"] == "2.00"
    chart = json.loads(page.split('id="report-chart-data" type="application/json">')[1].split("</script>")[0])
    assert chart["labels"][-1] == str(timezone.localdate()) and chart["datasets"][0]["label"] == "turnover EUR"
    assert chart["datasets"][0]["data"][-1] == 60.0


def test_operator_staff_see_only_their_operators_rows(client, ab):
    otp_login(client, staff_of(ab.a, VIEWER, "alpha_viewer"))
    for query in ("group=operator", "group=table", "group=day", "group=currency", "group=operator&operator=brand-beta"):
        page = client.get(f"{REPORT}?{query}").content.decode().replace(query.replace("&", "&amp;"), "")
        assert "brand-beta" not in page and "Beta Casino" not in page, query  # their own query aside
        rows = _csv(client, query)
        assert {r["bets"] for r in rows} == {"2"} and {r["adjusted"] for r in rows} - {""} <= {"1.00"}, query
    assert 'name="operator"' not in client.get(REPORT).content.decode()
    tables = {r["table"] for r in _csv(client, "group=table")}
    assert tables == {ab.shared.table.code, "total"}
    rtp = client.get(f"{REPORT}rtp/").content.decode()
    assert ab.shared.table.code in rtp and ab.b_round.table.code not in rtp


def test_the_observed_rtp_stands_beside_the_theoretical(client, ab):
    otp_login(client, ab.provider)
    page = client.get(f"{REPORT}rtp/").content.decode()
    assert f"rtp-{ab.shared.table.code}-main-data" in page and "not computed yet" in page
    from tables.rtp import compute_report
    compute_report(ab.shared.table.rules())
    page = client.get(f"{REPORT}rtp/").content.decode()
    assert "theoretical RTP %" in page and "0.99" in page


def test_bad_input_is_a_clear_error_not_a_crash(client, ab):
    otp_login(client, ab.provider)
    for query in ("date_from=2026-13-01", "date_from=2026-03-02&date_to=2026-03-01", "group=week",
                  "operator=nobody", "table=" + "x" * 40):
        response = client.get(f"{REPORT}?{query}")
        assert response.status_code == 200 and 'class="errorlist' in response.content.decode() or \
            "errornote" in response.content.decode(), query


@pytest.mark.parametrize("page", [REPORT + "?", REPORT + "?format=csv&", REPORT + "rtp/?"])
@pytest.mark.parametrize("dates", ["date_to=0001-01-01", "date_to=0001-01-29", "date_to=9999-12-31",
                                   "date_from=0001-01-01&date_to=9999-12-31"])
def test_the_first_and_last_days_of_the_calendar_are_a_report(client, ab, page, dates):
    otp_login(client, ab.provider)
    assert client.get(page + dates).status_code == 200


def test_chart_js_is_the_vendored_npm_file():
    digest = hashlib.sha256(CHART_JS.read_bytes()).hexdigest()
    assert digest == "87364cc2b2a76a6684929e7d6b80b18a897794db38400caff1fcf1791c6925d2"
    assert digest in (CHART_JS.parent / "README.md").read_text()
