"""Operator staff in the admin: a user who is an operator's staff sees only that operator's rows on
every page, list, search, CSV export, inline, autocomplete and action; another operator's object
by URL is a 404 (a provider's page a 403), never its data. The provider's staff see everything."""

import csv
import importlib
import io
import json
from decimal import Decimal
from html import unescape
from urllib.parse import unquote_plus

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.db import connection
from django.urls import NoReverseMatch, reverse

from accounts.models import Account, OperatorAPIKey, OperatorStaff
from accounts.scoping import OperatorScoped
from accounts.services import withdraw
from adminkit.roles import DISPUTE_OFFICER, SUPERVISOR, VIEWER
from settlement.models import Alert, Dispute, DisputeNote, OperatorAction, RoundCorrection
from settlement.voids import void_round
from tables.models import Round, RoundEvent
from tests.admin.conftest import B_MARKERS, lists_bet, play_boundless_round, staff_of, two_operators
from tests.factories import PlayerFactory, otp_login

pytestmark = pytest.mark.django_db


@pytest.fixture
def ab(db):
    return two_operators()


@pytest.fixture(params=[VIEWER, DISPUTE_OFFICER, SUPERVISOR])
def a_staff(request, ab):
    """An A-scoped user in each role."""
    return staff_of(ab.a, request.param, f"alpha_{request.param.lower().replace(' ', '_')}")


def _login(client, user):
    return otp_login(client, user)


def _text(response):
    if response.streaming:
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def _url(name, *args):
    return reverse(f"admin:{name}", args=args)


def b_links(ab):
    """The page links of B's rows: none may appear on a page of an A-scoped user."""
    return [_url("accounts_player_change", p.pk) for p in ab.beta] + [
        _url("accounts_account_change", ab.b_wallet.pk), _url("accounts_account_change", ab.b_house.pk),
        _url("accounts_operator_change", ab.b.pk), _url("settlement_dispute_change", ab.b_dispute.pk),
        _url("tables_round_change", ab.b_round.pk), _url("settlement_alert_change", ab.b_alert.pk),
    ] + [_url("wagering_bet_change", b.pk) for b in (*ab.b_bets, ab.shared_bets[1], ab.shared_bets[3])]


def assert_no_b(ab, response):
    """No B row's marker, key or link in ``response`` (what the user typed, echoed back, aside);
    returns the response's text."""
    shown = _text(response)
    text = unescape(unquote_plus(unquote_plus(shown)))  # links carry the query, quoted once or twice
    for value in sorted(response.wsgi_request.GET.values(), key=len, reverse=True):
        text = text.replace(value, "")
    for marker in (*B_MARKERS, ab.b_key.prefix, ab.b_key.hashed_key):
        assert marker not in text, (response.wsgi_request.get_full_path(), marker)
    for link in b_links(ab):
        assert f'href="{link}' not in shown, (response.wsgi_request.get_full_path(), link)
    return shown


def b_pages(ab):
    """Every page of one of B's rows (or the provider's), by what it shows."""
    return {
        "player": _url("accounts_player_change", ab.beta[0].pk),
        "player history": _url("accounts_player_history", ab.beta[0].pk),
        "wallet": _url("accounts_account_change", ab.b_wallet.pk),
        "house account": _url("accounts_account_change", ab.b_house.pk),
        "ledger transaction": _url("accounts_ledgertransaction_change", ab.b_transaction.pk),
        "bet of B's round": _url("wagering_bet_change", ab.b_bets[0].pk),
        "B's bet in the shared round": _url("wagering_bet_change", ab.shared_bets[1].pk),
        "round with only B's bets": _url("tables_round_change", ab.b_round.pk),
        "dispute": _url("settlement_dispute_change", ab.b_dispute.pk),
        "alert about B's player": _url("settlement_alert_change", ab.b_alert.pk),
        "provider's alert": _url("settlement_alert_change", ab.provider_alert.pk),
        "operator": _url("accounts_operator_change", ab.b.pk),
        "API key": _url("accounts_operatorapikey_change", ab.b_key.prefix),
        "API key history": _url("accounts_operatorapikey_history", ab.b_key.prefix),
        "API call": _url("accounts_operatorapicall_change", ab.b_call.pk),
        "operator action": _url("settlement_operatoraction_change", ab.b_action.pk),
        "settlement detail": _url("settlement_settlementdetail_change", ab.b_bets[0].settlement_id),
        "round correction": _url("settlement_roundcorrection_change", ab.b_correction.pk),
        "round event": _url("tables_roundevent_change", ab.b_round.events.first().pk),
        "operator staff": _url("accounts_operatorstaff_changelist"),
        "studio of the tables": _url("tables_studio_change", ab.b_round.table.studio_id),
        "game servers' keys": _url("tables_studioapikey_changelist"),
        "users": _url("auth_user_changelist"),
    }


def b_actions(ab):
    return {
        "void B's round": _url("tables_round_void", ab.b_round.pk),
        "void the shared round": _url("tables_round_void", ab.shared.pk),
        "resettle B's round": _url("tables_round_resettle", ab.b_round.pk),
        "resettle the shared round": _url("tables_round_resettle", ab.shared.pk),
        "assign": _url("settlement_dispute_assign", ab.b_dispute.pk),
        "note": _url("settlement_dispute_note", ab.b_dispute.pk),
        "resolve": _url("settlement_dispute_resolve", ab.b_dispute.pk),
        "adjust": _url("accounts_account_adjust", ab.b_wallet.pk),
    }


# --- B's rows are never reached --------------------------------------------------------------------

def test_b_pages_are_404_or_403_and_show_nothing_of_b(client, ab, a_staff):
    c = _login(client, a_staff)
    for what, url in b_pages(ab).items():
        response = c.get(url)
        assert response.status_code in (403, 404), (a_staff.username, what, response.status_code)
        assert_no_b(ab, response)


def test_b_actions_are_refused_and_change_nothing(client, ab, a_staff):
    c = _login(client, a_staff)
    balance, actions, corrections = ab.b_wallet.balance, OperatorAction.objects.count(), RoundCorrection.objects.count()
    record = json.dumps(ab.b_round.record)
    form = {"reason": "not mine", "text": "a note", "decision": "upheld", "adjustment": "50.00", "amount": "50.00",
            "key": "k-1", "record": record, "after_sequence": "1", "confirm": "1"}
    for what, url in b_actions(ab).items():
        for response in (c.get(url), c.post(url, form)):
            assert response.status_code in (403, 404), (a_staff.username, what, response.status_code)
            assert_no_b(ab, response)
    ab.b_dispute.refresh_from_db()
    assert ab.b_dispute.status == Dispute.Status.OPEN and ab.b_dispute.assignee is None
    assert not DisputeNote.objects.exists()
    assert Account.objects.get(pk=ab.b_wallet.pk).balance == balance
    assert Round.objects.get(pk=ab.b_round.pk).state == Round.State.SETTLED
    assert OperatorAction.objects.count() == actions and RoundCorrection.objects.count() == corrections


def test_b_alerts_are_not_acknowledged(client, ab, a_staff):
    response = _login(client, a_staff).post(_url("settlement_alert_changelist"), {
        "action": "acknowledge", "reason": "not mine", "_selected_action": [ab.b_alert.pk, ab.provider_alert.pk]},
        follow=True)
    assert_no_b(ab, response)
    assert not Alert.objects.filter(acknowledged_at__isnull=False).exists()


LISTS = ["accounts_player", "accounts_account", "accounts_ledgertransaction", "accounts_operator",
         "accounts_operatorapikey", "accounts_operatorapicall", "wagering_bet", "tables_round", "tables_table",
         "tables_seat", "tables_shoe", "accounts_currency", "settlement_dispute", "settlement_alert",
         "settlement_operatoraction", "settlement_adjustment"]


def test_lists_and_searches_never_include_b(client, ab, a_staff):
    c = _login(client, a_staff)
    for query in ({}, {"_facets": "True"}, {"q": "beta-p0"}, {"q": "brand-beta:beta-p0"}, {"q": "brand-beta"}):
        for name in LISTS:
            response = c.get(_url(f"{name}_changelist"), query)
            assert response.status_code == 200, (name, query, response.status_code)
            assert_no_b(ab, response)
        assert_no_b(ab, c.get(_url("settlement_alert_changelist"), {**query, "status": "all"}))
    response = c.get(_url("accounts_operatorapikey_changelist"), {"q": ab.b_key.prefix})
    assert_no_b(ab, response)
    response = c.get(_url("settlement_operatoraction_changelist"), {"q": str(ab.b_wallet.pk)})
    assert_no_b(ab, response)


def test_bet_record_with_b_filters_and_csv_hold_no_b_bet(client, ab, a_staff):
    c = _login(client, a_staff)
    b_round, bet = ab.b_round, ab.b_bets[0]
    for params in ({"player": "beta-p0"}, {"player": "brand-beta:beta-p0"}, {"round": str(b_round.pk)},
                   {"round": b_round.external_id}, {"round": f"{b_round.table.code}/{b_round.external_id}"},
                   {"table": b_round.table.code}, {"bet": str(bet.pk)}, {"round": str(ab.shared.pk)}):
        page = assert_no_b(ab, c.get(_url("wagering_bet_changelist"), params))
        assert not any(lists_bet(page, b) for b in (*ab.b_bets, ab.shared_bets[1], ab.shared_bets[3]))
        export = c.get(_url("wagering_bet_export"), params)
        rows = list(csv.reader(io.StringIO(assert_no_b(ab, export))))
        assert {int(r[0]) for r in rows[1:]} <= {ab.shared_bets[0].pk, ab.shared_bets[2].pk}, params
    rows = list(csv.reader(io.StringIO(_text(c.get(_url("wagering_bet_export"))))))
    assert sorted(int(r[0]) for r in rows[1:]) == [ab.shared_bets[0].pk, ab.shared_bets[2].pk]


def test_autocomplete_finds_only_the_own_operator(client, ab, a_staff):
    response = _login(client, a_staff).get(reverse("admin:autocomplete"), {
        "app_label": "accounts", "model_name": "operatorapikey", "field_name": "operator", "term": "brand"})
    assert response.status_code == 200
    assert [r["id"] for r in response.json()["results"]] == [str(ab.a.pk)]


# --- A's own rows, as usual ------------------------------------------------------------------------

def test_a_staff_see_their_own_rows(client, ab, a_staff):
    c = _login(client, a_staff)
    own = {
        _url("accounts_player_change", ab.alpha[0].pk): "alpha-p0",
        _url("accounts_account_change", ab.a_wallet.pk): "alpha goodwill",
        _url("wagering_bet_change", ab.shared_bets[0].pk): "Ledger entries",
        _url("settlement_dispute_change", ab.a_dispute.pk): "alpha complaint",
        _url("settlement_alert_change", ab.a_alert.pk): "brand-alpha:alpha-p0",
        _url("accounts_operator_change", ab.a.pk): "Alpha Casino",
        _url("accounts_operatorapikey_change", ab.a_key.prefix): ab.a_key.prefix,
        _url("settlement_operatoraction_change", ab.a_action.pk): "alpha goodwill",
        _url("tables_table_change", ab.shared.table.pk): "Theoretical RTP",
    }
    for url, shown in own.items():
        response = c.get(url)
        assert response.status_code == 200, url
        assert shown in assert_no_b(ab, response), url
    page = assert_no_b(ab, c.get(_url("wagering_bet_changelist")))
    assert lists_bet(page, ab.shared_bets[0]) and lists_bet(page, ab.shared_bets[2])
    assert "Open RTP-watch alerts" not in _text(c.get(_url("tables_table_change", ab.shared.table.pk)))


def test_a_shared_round_page_shows_only_a_bets(client, ab, a_staff):
    c = _login(client, a_staff)
    page = assert_no_b(ab, c.get(_url("tables_round_change", ab.shared.pk)))
    for bet in (ab.shared_bets[0], ab.shared_bets[2]):
        assert f'href="{_url("wagering_bet_change", bet.pk)}"' in page
    assert "Timeline" in page and "settled" in page and "per the record" not in page
    assert "staked=40.00" not in page and "accepted=4" not in page  # the round's steps: no totals of all bets
    assert "Void round" not in page and "Resettle" not in page
    for url in (_url("wagering_bet_change", ab.shared_bets[2].pk), _url("settlement_dispute_change", ab.a_dispute.pk)):
        assert "Round replay" in assert_no_b(ab, c.get(url))


@pytest.mark.parametrize("record_id", [["b0"], {"id": "b0"}])
def test_an_event_with_a_record_id_that_is_no_string_names_no_bet(client, ab, record_id):
    """An event stored with a ``record_id`` that is no string (a list, an object) is no bet's: the
    round and bet pages answer, for A's staff (who see A's bets only) and the provider's."""
    RoundEvent.objects.create(round=ab.shared, kind=RoundEvent.Kind.DECISION,
                              payload={"record_id": record_id, "action": "no-string-ref"})
    for user in (staff_of(ab.a, VIEWER, "alpha_viewer"), ab.provider):
        c = _login(client, user)
        for url in (_url("tables_round_change", ab.shared.pk), _url("wagering_bet_change", ab.shared_bets[0].pk)):
            page = _text(c.get(url))
            assert "Round replay" in page
            assert ("no-string-ref" in page) == (user == ab.provider)  # A sees the step, not its payload
        c.logout()


@pytest.mark.parametrize("role", [DISPUTE_OFFICER, SUPERVISOR])
def test_a_staff_work_their_disputes_and_wallets(client, ab, role):
    c = _login(client, staff_of(ab.a, role, "alpha_worker"))
    response = c.post(_url("settlement_dispute_resolve", ab.a_dispute.pk),
                      {"decision": "upheld", "adjustment": "5.00", "reason": "alpha video", "confirm": "1"})
    assert response.status_code == 302
    ab.a_dispute.refresh_from_db()
    assert ab.a_dispute.status == Dispute.Status.UPHELD
    response = c.post(_url("accounts_account_adjust", ab.a_dispute.player.wallets.get().pk),
                      {"amount": "2.00", "reason": "alpha courtesy", "key": "alpha-2", "dispute": ab.a_dispute.pk})
    assert response.status_code == 302
    assert OperatorAction.objects.filter(operator=ab.a, reason__in=["alpha video", "alpha courtesy"]).count() == 2
    page = assert_no_b(ab, c.get(_url("settlement_operatoraction_changelist")))
    assert "alpha video" in page and "alpha courtesy" in page


def test_an_a_supervisor_acknowledges_a_alerts_but_never_voids(client, ab):
    c = _login(client, staff_of(ab.a, SUPERVISOR, "alpha_boss"))
    c.post(_url("settlement_alert_changelist"), {"action": "acknowledge", "reason": "alpha checked",
                                                 "_selected_action": [ab.a_alert.pk]})
    assert Alert.objects.get(pk=ab.a_alert.pk).acknowledged_at is not None
    assert OperatorAction.objects.get(action="acknowledge_alert").operator == ab.a
    for name in ("tables_round_void", "tables_round_resettle"):
        assert c.get(_url(name, ab.shared.pk)).status_code == 403


def test_a_scoped_pages_stay_bounded(client, ab, django_assert_max_num_queries):
    c = _login(client, staff_of(ab.a, VIEWER, "alpha_counted"))
    with django_assert_max_num_queries(12):
        assert c.get(_url("wagering_bet_changelist")).status_code == 200
    with django_assert_max_num_queries(14):
        assert c.get(_url("tables_round_change", ab.shared.pk)).status_code == 200


# --- the provider's staff see everything ------------------------------------------------------------

def test_provider_staff_see_both_operators(client, ab):
    c = _login(client, ab.provider)
    for what, url in b_pages(ab).items():
        if what not in ("operator staff", "users", "operator", "studio of the tables", "game servers' keys"):
            # the provider's Supervisor is no superuser
            assert c.get(url).status_code == 200, what
    page = _text(c.get(_url("wagering_bet_changelist")))
    assert all(lists_bet(page, b) for b in (*ab.shared_bets, *ab.b_bets))
    page = _text(c.get(_url("tables_round_change", ab.shared.pk)))
    assert all(f'href="{_url("wagering_bet_change", b.pk)}"' in page for b in ab.shared_bets)
    assert "per the record" in page and "Void round" in page
    page = _text(c.get(_url("settlement_alert_changelist")))
    assert "brand-alpha:alpha-p0" in page and "brand-beta:beta-p0" in page and "rtp-provider-only" in page
    assert "Open RTP-watch alerts" in _text(c.get(_url("tables_table_change", ab.shared.table.pk)))
    missing = c.get(_url("accounts_player_change", 10 ** 9))
    assert missing.status_code == 302  # Django's own answer for the provider, as before


# --- operators and their keys ----------------------------------------------------------------------

def test_the_wallet_secret_is_write_only(client, ab, admin_user):
    c = _login(client, admin_user)
    for url in (_url("accounts_operator_changelist"), _url("accounts_operator_change", ab.b.pk)):
        page = _text(c.get(url))
        assert "Beta Casino" in page and "beta-wallet-secret" not in page
    form = {"name": "Beta Casino", "wallet_mode": "transfer", "currencies": ["EUR"], "wallet_url": "",
            "wallet_secret": "", "wallet_timeout_ms": "2500"}
    assert c.post(_url("accounts_operator_change", ab.b.pk), form).status_code == 302
    ab.b.refresh_from_db()
    assert ab.b.wallet_secret == "beta-wallet-secret-xyz" and ab.b.wallet_timeout_ms == 2500
    c.post(_url("accounts_operator_change", ab.b.pk), {**form, "wallet_secret": "rotated-secret"})
    ab.b.refresh_from_db()
    assert ab.b.wallet_secret == "rotated-secret"
    own = _login(client, staff_of(ab.b, VIEWER, "beta_viewer"))
    page = _text(own.get(_url("accounts_operator_change", ab.b.pk)))
    assert "Beta Casino" in page and "rotated-secret" not in page


def _key_form(operator, name):
    return {"operator": operator.pk, "name": name, "expiry_date_0": "", "expiry_date_1": ""}


def test_a_key_shows_its_raw_value_once_and_never_its_hash(client, ab, admin_user):
    c = _login(client, admin_user)
    response = c.post(_url("accounts_operatorapikey_add"), _key_form(ab.b, "beta second key"), follow=True)
    key = OperatorAPIKey.objects.get(name="beta second key")
    shown = [m.message for m in response.context["messages"]]
    raw = next(m for m in shown if "you will not be able to see it again" in m).split(" is: ")[1].split(". ")[0]
    assert key.is_valid(raw) and key.operator == ab.b
    pages = [_url("accounts_operatorapikey_changelist"), _url("accounts_operatorapikey_change", key.prefix),
             _url("accounts_operatorapikey_history", key.prefix), reverse("admin:index"),
             _url("accounts_operatorapicall_changelist"), _url("accounts_operatorapicall_change", ab.b_call.pk)]
    for url in pages:
        page = _text(c.get(url))
        assert raw not in page and key.hashed_key not in page and ab.b_key.hashed_key not in page, url
    response = c.post(_url("accounts_operatorapikey_change", key.prefix),
                      {"name": "beta second key", "revoked": "on", "expiry_date_0": "", "expiry_date_1": ""})
    assert response.status_code == 302 and response["Location"] == _url("accounts_operatorapikey_changelist")
    key.refresh_from_db()
    assert key.revoked
    page = _text(c.get(_url("accounts_operatorapikey_change", key.prefix)))
    assert 'name="revoked"' not in page  # revoked for good


def test_operator_staff_create_keys_only_for_their_operator(client, ab):
    user = staff_of(ab.a, SUPERVISOR, "alpha_keys")
    user.user_permissions.add(Permission.objects.get(codename="add_operatorapikey"))
    c = _login(client, user)
    assert ab.a.code in _text(c.get(_url("accounts_operatorapikey_add")))
    response = c.post(_url("accounts_operatorapikey_add"), _key_form(ab.b, "smuggled"))
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not OperatorAPIKey.objects.filter(name="smuggled").exists()
    assert c.post(_url("accounts_operatorapikey_add"), _key_form(ab.a, "alpha second key")).status_code == 302
    assert OperatorAPIKey.objects.get(name="alpha second key").operator == ab.a
    page = assert_no_b(ab, c.get(_url("accounts_operatorapikey_changelist")))
    assert ab.a_key.prefix in page


def test_operator_staff_membership_is_for_provider_superusers(client, ab, admin_user):
    url = _url("accounts_operatorstaff_changelist")
    assert _login(client, admin_user).get(url).status_code == 200
    assert _login(client, ab.provider).get(url).status_code == 403
    OperatorStaff.objects.create(user=admin_user, operator=ab.a)  # a superuser who is A's staff is A's
    assert _login(client, admin_user).get(url).status_code == 403
    assert_no_b(ab, client.get(_url("wagering_bet_changelist")))


def test_every_page_declares_its_operator_scope_and_the_library_key_page_is_gone():
    unscoped = [model._meta.label for model, page in admin.site._registry.items()
                if not isinstance(page, OperatorScoped)]
    assert not unscoped
    with pytest.raises(NoReverseMatch):
        reverse("admin:rest_framework_api_key_apikey_changelist")


# --- the rows that carry their operator ------------------------------------------------------------

def test_a_negative_wallet_alert_names_its_player_and_a_void_is_the_providers(db):
    player = PlayerFactory(funded="100.00")
    round_, bets = play_boundless_round(1, players=[player])
    wallet = Account.objects.get(kind=Account.Kind.WALLET, player=player)
    withdraw(wallet=wallet, amount="110.00", key="cash-out")
    void_round(round_id=round_.pk, reason="studio fault", actor="system")
    alert = Alert.objects.get(kind=Alert.Kind.NEGATIVE_WALLET)
    assert alert.player == player and Account.objects.get(pk=wallet.pk).balance == Decimal("-10.00")
    assert OperatorAction.objects.get(target_model="tables.round").operator is None


def test_the_migration_gives_earlier_rows_their_operator(ab):
    Alert.objects.filter(pk=ab.b_alert.pk).update(player=None, payload={"wallet": ab.b_wallet.pk})
    migration = importlib.import_module("settlement.migrations.0009_operator_scope")
    with connection.cursor() as cursor:  # as before 0011 made audit rows immutable (no triggers: superuser)
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = replica")
        OperatorAction.objects.update(operator=None)
        migration.backfill(apps, None)
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = DEFAULT")
    assert Alert.objects.get(pk=ab.b_alert.pk).player == ab.beta[0]
    assert OperatorAction.objects.get(pk=ab.b_action.pk).operator == ab.b
    assert OperatorAction.objects.get(target_model="tables.round").operator is None
