"""A real headless browser (Debian's chromium through Playwright; no browser download): a Dispute
officer searches the Bet Record, opens a bet and its round replay, and resolves a dispute with an
adjustment; an operator's Viewer finds only that operator's players and bets; the provider's staff
and an operator's open the dashboard, a report with its chart and CSV, the observed RTP, export the
Bet Record and read and export the exception report (the operator's staff their brand's only).
Screenshots go to
``test-artifacts/`` (git-ignored)."""

import csv
import io
import os
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings

from accounts.models import Account
from adminkit.roles import DISPUTE_OFFICER, VIEWER
from settlement.disputes import open_dispute
from settlement.models import Dispute, OperatorAction
from settlement.voids import void_round
from tests.admin.conftest import B_MARKERS, play_boundless_round, staff_of, two_operators
from tests.factories import OPERATOR_PASSWORD as PASSWORD
from tests.factories import make_operator, totp_code, totp_device

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

pytestmark = pytest.mark.skipif(not shutil.which(CHROMIUM), reason="Debian chromium is not installed")


def _log_in(page, url, username):
    page.goto(f"{url}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.fill("#id_otp_token", totp_code(totp_device(get_user_model().objects.get(username=username))))
    page.click("input[type=submit]")


@override_settings(SESSION_COOKIE_SECURE=False, CSRF_COOKIE_SECURE=False)
def test_dispute_officer_resolves_a_dispute_in_a_browser(live_server, transactional_db):
    from playwright.sync_api import expect, sync_playwright

    round_, bets = play_boundless_round(3)
    bet = bets[1]
    dispute = open_dispute(player=bet.player, bets=[bet], reason="my 16 should have pushed")
    make_operator(DISPUTE_OFFICER, username="officer")
    ARTIFACTS.mkdir(exist_ok=True)
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # the live server thread answers while playwright's loop runs
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        _log_in(page, live_server.url, "officer")
        page.goto(f"{live_server.url}/admin/wagering/bet/")
        page.fill("#f-player", bet.player.code)
        page.locator("#f-player").press("Enter")
        expect(page.locator("#result_list tbody tr")).to_have_count(1)
        page.screenshot(path=ARTIFACTS / "1-bet-record-search.png", full_page=True)
        # every column fits at 1600 px (outcome was clipped and returned off-screen)
        right = page.evaluate("Math.max(...[...document.querySelectorAll('#result_list th')]"
                              ".map(e => e.getBoundingClientRect().right))")
        assert right <= 1600, right
        page.click("#result_list tbody tr th a")
        expect(page.locator("#bet-detail")).to_contain_text("Ledger entries")
        expect(page.locator("#replay")).to_contain_text("Dealer")
        page.screenshot(path=ARTIFACTS / "2-bet-page.png", full_page=True)
        page.click("#replay a.round-link")
        expect(page.locator("#replay")).to_contain_text("Timeline")
        page.screenshot(path=ARTIFACTS / "3-round-replay.png", full_page=True)
        page.goto(f"{live_server.url}/admin/settlement/dispute/")
        page.screenshot(path=ARTIFACTS / "4-dispute-queue.png", full_page=True)
        page.click("#result_list tbody tr th a")
        page.click("input[value='Assign to me']")
        page.check("#resolve-form input[value=upheld]")
        page.fill("#resolve-form [name=adjustment]", "10.00")
        page.fill("#resolve-form [name=reason]", "video shows the dealer's 7 was a 6: push")
        page.screenshot(path=ARTIFACTS / "5-dispute-resolve.png", full_page=True)
        page.click("#resolve-form input[type=submit]")
        expect(page.locator("#adjustment-confirm")).to_contain_text("The disputed stake is 10.00 EUR")
        page.click("#confirm-form input[name=confirm]")
        expect(page.locator(".messagelist")).to_contain_text("upheld")
        page.screenshot(path=ARTIFACTS / "6-dispute-resolved.png", full_page=True)
        browser.close()
    del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]
    dispute.refresh_from_db()
    assert dispute.status == Dispute.Status.UPHELD and dispute.adjustment == Decimal("10.00")
    assert Account.objects.get(kind="wallet", player=bet.player).balance == Decimal("100.00")
    assert OperatorAction.objects.filter(action="resolve_dispute", actor__username="officer").count() == 1


@override_settings(SESSION_COOKIE_SECURE=False, CSRF_COOKIE_SECURE=False)
def test_an_operators_viewer_finds_only_its_players_in_a_browser(live_server, transactional_db):
    from playwright.sync_api import expect, sync_playwright

    ab = two_operators()
    staff_of(ab.a, VIEWER, "alpha_viewer")
    ARTIFACTS.mkdir(exist_ok=True)
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        _log_in(page, live_server.url, "alpha_viewer")
        page.goto(f"{live_server.url}/admin/wagering/bet/")
        players = page.locator("#result_list tbody td.field-player")
        expect(players).to_have_count(2)  # A's two bets of the shared round; B's two there and two alone: none
        assert all(text.startswith("brand-alpha:") for text in players.all_inner_texts())
        page.screenshot(path=ARTIFACTS / "7-operator-bet-record.png", full_page=True)
        page.fill("#f-player", "beta-p0")
        page.locator("#f-player").press("Enter")
        expect(page.locator("#result_list tbody tr")).to_have_count(0)
        page.goto(f"{live_server.url}/admin/accounts/player/")
        expect(page.locator("#result_list tbody tr")).to_have_count(2)
        page.fill("#searchbar", "beta-p0")
        page.locator("#searchbar").press("Enter")
        expect(page.locator("#result_list tbody tr")).to_have_count(0)
        page.fill("#searchbar", "alpha-p0")
        page.locator("#searchbar").press("Enter")
        expect(page.locator("#result_list tbody tr")).to_have_count(1)
        expect(page.locator("#result_list")).to_contain_text("alpha-p0")
        page.screenshot(path=ARTIFACTS / "8-operator-player-search.png", full_page=True)
        assert "brand-beta" not in page.content()
        browser.close()
    del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


def _chart_drawn(page, canvas_id):
    """The number of datasets Chart.js drew on canvas ``canvas_id`` (0: not drawn)."""
    return page.evaluate(f"(document.getElementById('{canvas_id}').chart || {{data: {{datasets: []}}}})"
                         ".data.datasets.length")


def _csv_download(page):
    with page.expect_download() as download:
        page.click("a.csv-export")
    return Path(download.value.path()).read_text()


@override_settings(SESSION_COOKIE_SECURE=False, CSRF_COOKIE_SECURE=False)
def test_dashboard_reports_charts_and_csv_for_the_provider_and_an_operator(live_server, transactional_db):
    """The provider's Supervisor and an operator's Viewer open the dashboard (its chart drawn by
    Chart.js), a report by operator with its chart, its CSV export and the observed RTP's chart:
    the provider sees both brands, the operator's Viewer only its own."""
    from playwright.sync_api import expect, sync_playwright

    ab = two_operators()
    staff_of(ab.a, VIEWER, "alpha_viewer")
    ARTIFACTS.mkdir(exist_ok=True)
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for username, brands, shot in (("provider_supervisor", {"brand-alpha", "brand-beta"}, "9-provider"),
                                       ("alpha_viewer", {"brand-alpha"}, "10-operator")):
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            _log_in(page, live_server.url, username)
            expect(page.locator("#dashboard")).to_contain_text("Open disputes")
            expect(page.locator("#dashboard .tile.money")).to_contain_text("EUR")
            page.wait_for_function("document.getElementById('dashboard-chart').chart !== undefined")
            assert _chart_drawn(page, "dashboard-chart") == 2  # turnover and GGR in EUR
            assert (page.locator("#rtp-watch").count() == 1) == (username == "provider_supervisor")
            page.screenshot(path=ARTIFACTS / f"{shot}-dashboard.png", full_page=True)
            page.goto(f"{live_server.url}/admin/wagering/dailyrollup/?group=operator")
            page.wait_for_function("document.getElementById('report-chart').chart !== undefined")
            assert _chart_drawn(page, "report-chart") == 2
            shown = set(page.locator("#report-table tbody tr:not(.total) td:first-child").all_inner_texts())
            assert shown == brands
            page.screenshot(path=ARTIFACTS / f"{shot}-report.png", full_page=True)
            exported = _csv_download(page)
            assert {line.split(",")[0] for line in exported.splitlines()[1:]} == brands | {"total"}
            assert ("brand-beta" in exported) == ("brand-beta" in brands)
            page.goto(f"{live_server.url}/admin/wagering/dailyrollup/rtp/")
            canvas = f"rtp-{ab.shared.table.code}-main"
            page.wait_for_function(f"document.getElementById('{canvas}').chart !== undefined")
            assert _chart_drawn(page, canvas) == 2  # observed and theoretical
            assert (ab.b_round.table.code in page.content()) == (username == "provider_supervisor")
            page.screenshot(path=ARTIFACTS / f"{shot}-rtp.png", full_page=True)
            page.close()
        browser.close()
    del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


@pytest.mark.parametrize("who", ["provider", "operator"])
@override_settings(SESSION_COOKIE_SECURE=False, CSRF_COOKIE_SECURE=False)
def test_csv_export_and_exception_report_in_a_browser(live_server, transactional_db, who):
    """The provider's staff export every operator's bets and read every exception line; operator
    A's Viewer exports and reads A's only (B's players, reasons and brand never appear)."""
    from playwright.sync_api import expect, sync_playwright

    ab = two_operators()
    void_round(round_id=ab.shared.pk, reason="shoe misdealt", actor=ab.provider)
    username = "provider_supervisor" if who == "provider" else staff_of(ab.a, VIEWER, "alpha_viewer").username
    brands = {"brand-alpha", "brand-beta"} if who == "provider" else {"brand-alpha"}
    ARTIFACTS.mkdir(exist_ok=True)
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000}, accept_downloads=True)
        _log_in(page, live_server.url, username)
        page.goto(f"{live_server.url}/admin/wagering/bet/")
        with page.expect_download() as download:
            page.click("a.export")
        bets = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
        assert {r["operator"] for r in bets} == brands
        assert all(r["staked"] and r["net"] for r in bets)

        page.goto(f"{live_server.url}/admin/settlement/exceptionentry/")
        expect(page.locator("#result_list")).to_contain_text("shoe misdealt")
        expect(page.locator("#result_list")).to_contain_text("alpha goodwill")
        page.screenshot(path=ARTIFACTS / f"9-exception-report-{who}.png", full_page=True)
        page.click("#changelist-filter a:text('Reversal of a settled round')")
        expect(page.locator("#result_list tbody tr")).to_have_count(len(brands))
        with page.expect_download() as download:
            page.click("a.export")
        lines = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
        assert {r["operator"] for r in lines} == brands and {r["kind"] for r in lines} == {"reversal"}
        if who == "operator":
            assert not any(marker in page.content() for marker in B_MARKERS)
        browser.close()
    del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]
