"""A real headless browser (Debian's chromium through Playwright; no browser download): a Dispute
officer searches the Bet Record, opens a bet and its round replay, and resolves a dispute with an
adjustment; an operator's Viewer finds only that operator's players and bets. Screenshots go to
``test-artifacts/`` (git-ignored)."""

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
from tests.admin.conftest import play_boundless_round, staff_of, two_operators
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
