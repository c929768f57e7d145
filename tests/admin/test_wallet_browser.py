"""The wallet console in a real headless browser (Debian's chromium through Playwright, as
``test_browser``): a seamless operator's wallet (the reference wallet process) refuses the
platform's signature, so a credit keeps failing; the operator's Supervisor opens the console, sees
it with its reason and its alert, opens its journal, retries it once the secret is put right, and
it is delivered (by a real worker on PostgreSQL, in-process on SQLite) long before its backoff
would have sent it. The operator's Viewer sees no retry button; another operator's Supervisor gets
a 404 for it. Screenshots go to ``test-artifacts/``."""

import os
import shutil
import time

import pytest
from django.db import connections
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from accounts.models import Operator
from adminkit.roles import SUPERVISOR, VIEWER
from settlement.jobs import watch_wallets
from settlement.models import Alert, OperatorAction
from tests.admin.conftest import staff_of
from tests.admin.test_browser import ARGS, ARTIFACTS, CHROMIUM, _log_in
from tests.conftest import on_postgresql
from tests.operator_wallet.sandbox import SECRET
from tests.wallets.seamless import failing_credit, seamless_operator
from wallets.models import WalletMovement

pytestmark = pytest.mark.skipif(not shutil.which(CHROMIUM), reason="Debian chromium is not installed")


def _delivered(movement, timeout=30):
    deadline = time.monotonic() + timeout
    while WalletMovement.objects.get(pk=movement.pk).state != WalletMovement.State.OK:
        assert time.monotonic() < deadline, "the retried movement was not delivered"
        time.sleep(0.2)


@override_settings(SESSION_COOKIE_SECURE=False, CSRF_COOKIE_SECURE=False, WALLET_ALERT_AFTER_SECONDS=0)
def test_a_supervisor_retries_a_failing_movement_from_the_console(live_server, transactional_db, wallet, request):
    from playwright.sync_api import expect, sync_playwright

    start_worker = request.getfixturevalue("celery_workers") if on_postgresql() else None  # purges the queues
    alpha, players = seamless_operator("sea-alpha", wallet.url, secret="not-the-secret", players=("alpha-p1",),
                                       name="Alpha Seas")
    beta, _ = seamless_operator("sea-beta", wallet.url, players=("beta-p1",))
    credit = failing_credit(players["alpha-p1"], "goodwill")  # 7 attempts refused (HTTP 401): 60 s to the next
    watch_wallets()
    if start_worker:
        start_worker("wallets")  # the queued delivery finds nothing due, and comes back in 60 s
    staff_of(alpha, SUPERVISOR, "alpha_boss")
    staff_of(alpha, VIEWER, "alpha_viewer")
    staff_of(beta, SUPERVISOR, "beta_boss")
    movement_url = f"{live_server.url}{reverse('admin:wallets_walletmovement_change', args=[credit.pk])}"
    ARTIFACTS.mkdir(exist_ok=True)
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # the live server thread answers while playwright's loop runs
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for username, status in (("beta_boss", 404), ("alpha_viewer", 200)):
                page = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
                _log_in(page, live_server.url, username)
                assert page.goto(movement_url).status == status, username
            expect(page.locator("#attempts tbody tr")).to_have_count(7)  # the viewer reads the journal...
            expect(page.locator("#retry-form")).to_have_count(0)  # ...and cannot retry

            page = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
            _log_in(page, live_server.url, "alpha_boss")
            page.goto(f"{live_server.url}{reverse('admin:wallets_walletmovement_console')}")
            expect(page.locator("tr[data-operator=sea-alpha] td.failing")).to_have_text("1")
            expect(page.locator("#console")).not_to_contain_text("sea-beta")
            expect(page.locator("#wallet-alerts")).to_contain_text(credit.key)
            expect(page.locator("#failures tr.failure")).to_have_count(7)
            expect(page.locator("#failures tr.failure").first).to_contain_text("HTTP 401")
            page.screenshot(path=ARTIFACTS / "9-wallet-console.png", full_page=True)

            page.locator("#failures tr.failure a").first.click()
            expect(page.locator("#attempts tbody tr")).to_have_count(7)
            expect(page.locator("#attempts")).to_contain_text("401")
            page.locator("#attempts details").first.click()
            expect(page.locator("#attempts pre").first).to_contain_text('"transaction_id": "bj:adjust:manual:goodwill"')
            page.screenshot(path=ARTIFACTS / "10-wallet-movement.png", full_page=True)

            Operator.objects.filter(pk=alpha.pk).update(wallet_secret=SECRET)  # the provider puts the secret right
            waiting = WalletMovement.objects.get(pk=credit.pk).next_attempt_at
            page.fill("#retry-form [name=reason]", "the wallet secret was wrong; corrected with the operator")
            page.click("#retry-form input[type=submit]")
            expect(page.locator(".messagelist")).to_contain_text("is sent again now")
            _delivered(credit)
            assert timezone.now() < waiting  # the retry sent it, not its backoff
            page.reload()
            expect(page.locator("#retry-form")).to_have_count(0)
            expect(page.locator("#attempts tbody tr")).to_have_count(8)
            expect(page.locator("#attempts tbody tr").first).to_contain_text("200")
            page.screenshot(path=ARTIFACTS / "11-wallet-movement-retried.png", full_page=True)
            browser.close()
            connections.close_all()  # the ORM's connections of playwright's greenlet (another context)
    finally:
        del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]
    assert wallet.balance_of("alpha-p1") == "1005.00"
    audit = OperatorAction.objects.get(action=OperatorAction.Action.RETRY_MOVEMENT)
    assert (audit.actor.username, audit.operator, audit.target_pk) == ("alpha_boss", alpha, str(credit.pk))
    assert watch_wallets() == (0, 1)
    assert not Alert.objects.filter(acknowledged_at__isnull=True).exists()
