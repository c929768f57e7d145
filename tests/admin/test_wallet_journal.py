"""The wallet journal in the admin: the movements with each attempt of their calls, the console of
what waits at each operator's wallet (with its open ``wallet_failing`` alerts), and a Supervisor's
"Retry now" (POST, CSRF, a reason, audited). Two seamless operators, ``sea-alpha`` and
``sea-beta``, at one reference wallet process: each operator's staff reach only their own; the
provider's staff see both."""

from html import unescape
from types import SimpleNamespace
from urllib.parse import unquote_plus

import pytest
from django.test import Client
from django.urls import reverse

from adminkit.roles import DISPUTE_OFFICER, SUPERVISOR, VIEWER
from settlement.jobs import watch_wallets
from settlement.models import Alert, OperatorAction
from tests.admin.conftest import staff_of
from tests.factories import PlayerFactory, make_operator, otp_login
from tests.wallets.seamless import adjustment, attempt, failing_credit, seamless_operator
from wallets import outbox
from wallets.models import WalletMovement

pytestmark = pytest.mark.django_db
State = WalletMovement.State


def _url(name, *args):
    return reverse(f"admin:{name}", args=args)


def _page(client, user, url, **query):
    """``(response, its text)``: the HTML with entities unescaped."""
    otp_login(client, user)
    response = client.get(url, query)
    return response, unescape(response.content.decode())


@pytest.fixture
def seas(wallet, settings):
    """``sea-alpha`` (player ``alpha-p1``) and ``sea-beta`` (``beta-p1``), and of each: a credit
    failing (the wallet was down for 7 attempts; it is back), an acknowledged credit, and a
    correction refused for good (INSUFFICIENT_FUNDS); an open ``wallet_failing`` alert per failing
    or failed movement; the provider's Supervisor."""
    a, alpha = seamless_operator("sea-alpha", wallet.url, players=("alpha-p1",), name="Alpha Seas")
    b, beta = seamless_operator("sea-beta", wallet.url, players=("beta-p1",), name="Beta Seas")
    alpha, beta = alpha["alpha-p1"], beta["beta-p1"]
    done = {p: adjustment(p, "1.00", f"done-{p.code}") for p in (alpha, beta)}
    failed = {p: adjustment(p, "-5000.00", f"refused-{p.code}") for p in (alpha, beta)}
    attempt()
    wallet.faults(down=True)
    failing = {p: failing_credit(p, f"failing-{p.code}") for p in (alpha, beta)}
    wallet.faults(down=False)
    settings.WALLET_ALERT_AFTER_SECONDS = 0
    watch_wallets()
    for movements in (done, failing, failed):
        for m in movements.values():
            m.refresh_from_db()
    assert {m.state for m in done.values()} == {State.OK} and {m.state for m in failed.values()} == {State.FAILED}
    return SimpleNamespace(a=a, b=b, alpha=alpha, beta=beta, a_done=done[alpha], b_done=done[beta],
                           a_failing=failing[alpha], b_failing=failing[beta], a_failed=failed[alpha],
                           b_failed=failed[beta], provider=make_operator(SUPERVISOR, username="provider_supervisor"))


def b_marks(seas):
    """What only B's rows hold: none of it may reach a page of A's staff."""
    return ("sea-beta", "Beta Seas", "beta-p1", seas.b_failing.key, seas.b_failed.key,
            f'walletmovement/{seas.b_failing.pk}/', f'walletmovement/{seas.b_failed.pk}/')


def assert_no_b(seas, response):
    """No mark of B's rows in ``response`` (what the user typed, echoed back, aside)."""
    text = unescape(unquote_plus(unquote_plus(response.content.decode())))  # links quote the query
    for value in sorted(response.wsgi_request.GET.values(), key=len, reverse=True):
        text = text.replace(value, "")
    for mark in b_marks(seas):
        assert mark not in text, (response.wsgi_request.get_full_path(), mark)


# --- the journal -----------------------------------------------------------------------------------

def test_a_movement_page_shows_every_attempt_with_its_request_and_answer(client, seas):
    response, page = _page(client, seas.provider, _url("wallets_walletmovement_change", seas.a_failing.pk))
    assert response.status_code == 200
    assert page.count('class="attempt outcome-unknown"') == 7 and "HTTP 503" in page
    assert '"transaction_id": "bj:adjust:manual:failing-alpha-p1"' in page  # the request, indented JSON
    assert '"error": "the wallet is down"' in page  # the wallet's own answer
    assert "bj:adjust:manual:failing-alpha-p1" in page and "5.00 EUR" in page  # transaction id, amount
    response, page = _page(client, seas.provider, _url("wallets_walletmovement_change", seas.a_failed.pk))
    assert '"status": "INSUFFICIENT_FUNDS"' in page and "Refused" in page


def test_the_list_filters_and_searches_by_operator_state_call_kind_key_round_and_player(client, seas):
    url = _url("wallets_walletmovement_changelist")
    cases = [({}, 6), ({"operator__id__exact": seas.a.pk}, 3), ({"state__exact": "failed"}, 2),
             ({"failing": "yes"}, 2), ({"call__exact": "debit"}, 2), ({"kind": "correction"}, 2),
             ({"kind": "payout"}, 0), ({"q": seas.a_failing.key}, 1), ({"q": f"bj:{seas.a_failing.key}"}, 1),
             ({"q": "alpha-p1"}, 3), ({"q": "sea-beta:beta-p1"}, 3), ({"q": "nobody"}, 0)]
    for query, rows in cases:
        response, _ = _page(client, seas.provider, url, **query)
        assert response.status_code == 200, query
        assert len(response.context["cl"].result_list) == rows, query


def test_the_list_never_counts_and_stays_bounded(client, seas, django_assert_max_num_queries):
    otp_login(client, seas.provider)
    for query in ({}, {"state__exact": "pending"}, {"q": "alpha-p1"}, {"operator__id__exact": seas.a.pk}):
        with django_assert_max_num_queries(10) as queries:
            assert client.get(_url("wallets_walletmovement_changelist"), query).status_code == 200
        assert not [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()], query


# --- the console -----------------------------------------------------------------------------------

def test_the_console_counts_each_operators_movements_and_lists_alerts_and_failures(client, seas):
    response, page = _page(client, seas.provider, _url("wallets_walletmovement_console"))
    assert response.status_code == 200
    consoles = {c.operator: (c.pending, c.failing, c.failed, c.oldest_pending) for c in response.context["consoles"]}
    assert consoles == {seas.a: (1, 1, 1, seas.a_failing), seas.b: (1, 1, 1, seas.b_failing)}
    assert response.context["alerts_open"] == 4 and len(response.context["alerts"]) == 4
    assert len(response.context["failures"]) == 14  # the 7 failed attempts of each failing credit
    assert "HTTP 503" in page and seas.a_failing.key in page and seas.b_failing.key in page
    changelist = _url("wallets_walletmovement_changelist")
    assert f"{changelist}?operator__id__exact={seas.a.pk}&failing=yes" in page
    assert f"{changelist}?operator__id__exact={seas.b.pk}&state__exact=failed" in page
    assert _url("wallets_walletmovement_change", seas.a_failed.pk) in page  # from its alert


def test_an_operators_staff_see_their_console_movements_and_alerts_only(client, seas):
    for role in (VIEWER, DISPUTE_OFFICER, SUPERVISOR):
        user = staff_of(seas.a, role, f"alpha_{role.lower().replace(' ', '_')}")
        own = (_url("wallets_walletmovement_console"), _url("wallets_walletmovement_console_of", seas.a.pk),
               _url("wallets_walletmovement_changelist"), _url("wallets_walletmovement_change", seas.a_failing.pk))
        for url in own:
            response, page = _page(client, user, url)
            assert response.status_code == 200, (role, url)
            assert "sea-alpha" in page
            assert_no_b(seas, response)
        response, _ = _page(client, user, _url("wallets_walletmovement_console"))
        assert [c.operator for c in response.context["consoles"]] == [seas.a]
        assert response.context["alerts_open"] == 2
        for query in ({"q": seas.b_failing.key}, {"q": "beta-p1"}, {"operator__id__exact": seas.b.pk}):
            response, page = _page(client, user, _url("wallets_walletmovement_changelist"), **query)
            assert {m.operator for m in response.context["cl"].result_list} <= {seas.a}, query
            assert_no_b(seas, response)
        for url in (_url("wallets_walletmovement_change", seas.b_failing.pk),
                    _url("wallets_walletmovement_change", seas.b_done.pk),
                    _url("wallets_walletmovement_console_of", seas.b.pk)):
            response, _ = _page(client, user, url)
            assert response.status_code == 404, (role, url)
            assert_no_b(seas, response)


def test_the_console_of_an_operator_without_a_seamless_wallet_is_not_found(client, seas):
    transfer = PlayerFactory().operator
    response, _ = _page(client, seas.provider, _url("wallets_walletmovement_console_of", transfer.pk))
    assert response.status_code == 404


# --- Retry now -------------------------------------------------------------------------------------

def _retry(client, user, movement, reason="the operator fixed its wallet"):
    otp_login(client, user)
    return client.post(_url("wallets_walletmovement_retry", movement.pk), {"reason": reason}, follow=True)


@pytest.mark.parametrize("role", [VIEWER, DISPUTE_OFFICER])
def test_viewers_and_dispute_officers_cannot_retry(client, seas, role):
    for user in (make_operator(role, username="provider_x"), staff_of(seas.a, role, "alpha_x")):
        _, page = _page(client, user, _url("wallets_walletmovement_change", seas.a_failing.pk))
        assert "Retry now" not in page
        assert _retry(client, user, seas.a_failing).status_code == 403
    assert WalletMovement.objects.get(pk=seas.a_failing.pk).next_attempt_at == seas.a_failing.next_attempt_at
    assert not OperatorAction.objects.filter(action="retry_movement").exists()


@pytest.mark.parametrize("movement", ["a_failing", "a_failed"])
def test_a_supervisor_retries_a_failing_or_failed_movement_audited(client, seas, wallet, movement):
    movement = getattr(seas, movement)
    user = staff_of(seas.a, SUPERVISOR, "alpha_boss")
    wallet.set_player(player="alpha-p1", currency="EUR", balance="9000.00")  # the correction is covered now
    _, page = _page(client, user, _url("wallets_walletmovement_change", movement.pk))
    assert "Retry now" in page
    response = _retry(client, user, movement)
    assert response.status_code == 200 and "is sent again now" in response.content.decode()
    audit = OperatorAction.objects.get(action="retry_movement")
    assert (audit.actor, audit.operator, audit.target_model, audit.target_pk, audit.reason) == (
        user, seas.a, "wallets.walletmovement", str(movement.pk), "the operator fixed its wallet")
    assert audit.payload["key"] == movement.key and audit.payload["state"] == movement.state
    assert "the operator fixed its wallet" in response.content.decode()  # the page's audit trail
    outbox.deliver()  # what the queued delivery does (in-process, or a worker)
    assert WalletMovement.objects.get(pk=movement.pk).state == State.OK
    watch_wallets()
    assert not Alert.objects.filter(payload__movement=movement.pk, acknowledged_at__isnull=True).exists()


def test_the_providers_supervisor_retries_any_operators_movement(client, seas):
    _retry(client, seas.provider, seas.b_failing)
    assert WalletMovement.objects.get(pk=seas.b_failing.pk).next_attempt_at < seas.b_failing.next_attempt_at
    assert OperatorAction.objects.get(action="retry_movement").operator == seas.b


def test_a_supervisor_of_one_operator_gets_404_for_anothers_movement(client, seas):
    user = staff_of(seas.a, SUPERVISOR, "alpha_boss")
    for movement in (seas.b_failing, seas.b_failed):
        response = _retry(client, user, movement)
        assert response.status_code == 404
        assert_no_b(seas, response)
        assert WalletMovement.objects.get(pk=movement.pk).state == movement.state
    assert not OperatorAction.objects.filter(action="retry_movement").exists()


@pytest.mark.parametrize("reason", ["", "   "])
def test_a_retry_without_a_reason_changes_nothing(client, seas, reason):
    response = _retry(client, seas.provider, seas.a_failed, reason=reason)
    assert "was not retried: a reason is required" in response.content.decode()
    assert WalletMovement.objects.get(pk=seas.a_failed.pk).state == State.FAILED
    assert not OperatorAction.objects.filter(action="retry_movement").exists()


def test_a_movement_that_cannot_be_retried_is_refused_with_why(client, seas):
    _, page = _page(client, seas.provider, _url("wallets_walletmovement_change", seas.a_done.pk))
    assert "Retry now" not in page
    response = _retry(client, seas.provider, seas.a_done)
    assert "was not retried" in response.content.decode() and "has acknowledged it" in response.content.decode()
    assert not OperatorAction.objects.filter(action="retry_movement").exists()


def test_retry_is_a_post_with_csrf(client, seas):
    url = _url("wallets_walletmovement_retry", seas.a_failed.pk)
    otp_login(client, seas.provider)
    assert client.get(url).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    otp_login(strict, seas.provider)
    assert strict.post(url, {"reason": "no token"}).status_code == 403
    assert WalletMovement.objects.get(pk=seas.a_failed.pk).state == State.FAILED
