"""The tester's findings on the operator site: money format, Bet Record search input, table RTP
on first view, house/cashier balances, round names, dispute resolution, alerts, long timelines."""

import json
from decimal import Decimal
from unittest import mock

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from accounts.models import Account
from accounts.selectors import account_balance
from adminkit.money import format_money
from settlement import replay as replay_module
from settlement.disputes import open_dispute
from settlement.models import Alert, Dispute
from tables.models import RoundEvent, TheoreticalRtp
from tests.admin.conftest import lists_bet, play_boundless_round
from tests.factories import BoundlessTableFactory, PremiumTableFactory, otp_login

BETS = "admin:wagering_bet_changelist"


@pytest.fixture
def admin_client_(client, admin_user):
    return otp_login(client, admin_user)


def _messages(response):
    return [str(m) for m in get_messages(response.wsgi_request)]


# 1. money ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("amount, units, shown", [
    (Decimal("2012.5000"), 2, "2,012.50"), (Decimal("5.0000"), 2, "5.00"), (Decimal("-1234567.5"), 2, "-1,234,567.50"),
    (Decimal("5"), 0, "5"), (Decimal("12.5"), 3, "12.500"), (None, 2, ""), ("12.5", 2, "12.50"), (0, 2, "0.00"),
])
def test_format_money(amount, units, shown):
    assert format_money(amount, units) == shown


def test_money_is_shown_in_us_format_with_the_currency(admin_client_, settled_round):
    round_, bets = settled_round
    page = admin_client_.get(reverse(BETS)).content.decode()
    assert "10.00" in page and "20.00" in page and "EUR" in page and ".0000" not in page
    for url in (reverse("admin:wagering_bet_change", args=[bets[0].pk]),
                reverse("admin:tables_round_change", args=[round_.pk]),
                reverse("admin:accounts_player_change", args=[bets[0].player_id])):
        page = admin_client_.get(url).content.decode()
        assert ".0000" not in page, url
    assert "110.00 EUR" in admin_client_.get(reverse("admin:accounts_player_change",
                                                     args=[bets[0].player_id])).content.decode()


def test_resettle_preview_shows_player_codes_and_money(admin_client_, settled_round):
    round_, bets = settled_round
    record = dict(round_.record, dealer=["TC", "9S"])
    page = admin_client_.post(reverse("admin:tables_round_resettle", args=[round_.pk]),
                              {"record": json.dumps(record), "reason": "misread", "preview": "1"}).content.decode()
    assert "Step 2 of 2" in page
    preview = page[page.index("resettle-preview"):page.index("Confirm resettle")]
    assert bets[0].player.code in preview and ".0000" not in preview and "20.00" in preview


# 2. Bet Record layout ------------------------------------------------------------------------------

def test_bet_record_shows_seconds_and_table_code_round(admin_client_, settled_round):
    round_, bets = settled_round
    page = admin_client_.get(reverse(BETS)).content.decode()
    assert bets[0].placed_at.strftime("%H:%M:%S") in page
    assert f"{round_.table.code}/{round_.external_id}" in page


# 3. bad search input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("params", [
    {"round": "99999999999999999999999"}, {"bet": "99999999999999999999999"}, {"stake_min": "NaN"},
    {"stake_max": "Infinity"}, {"stake_min": "1e400"}, {"placed_to": "9999-12-31"}, {"placed_from": "0001-01-01"},
    {"placed_from": "2024-02-30"},
])
def test_bad_bet_record_input_is_refused_with_a_message(admin_client_, settled_round, params):
    response = admin_client_.get(reverse(BETS), params)
    assert response.status_code == 200
    assert any("ignored" in m for m in _messages(response)), _messages(response)
    assert admin_client_.get(reverse("admin:wagering_bet_export"), params).status_code == 200


# 4. table RTP on first view -----------------------------------------------------------------------

def test_table_page_queues_the_rtp_when_missing(admin_client_, db):
    table = PremiumTableFactory()
    TheoreticalRtp.objects.all().delete()
    with mock.patch("tables.tasks.compute_table_rtp.delay_on_commit") as queued:
        page = admin_client_.get(reverse("admin:tables_table_change", args=[table.pk])).content.decode()
    queued.assert_called_once_with(table.pk)
    assert "not computed yet" in page and "is queued" in page
    assert not TheoreticalRtp.objects.exists()  # never computed on a page load
    # what the queued task does
    from tables.tasks import compute_table_rtp

    compute_table_rtp(table.pk)
    page = admin_client_.get(reverse("admin:tables_table_change", args=[table.pk])).content.decode()
    assert "house edge" in page and "queued" not in page and TheoreticalRtp.objects.count() == 1


# 5. house and cashier balances --------------------------------------------------------------------

def test_house_and_cashier_accounts_show_the_sum_of_their_entries(admin_client_, settled_round,
                                                                  django_assert_max_num_queries):
    house = Account.objects.get(kind=Account.Kind.HOUSE)
    cashier = Account.objects.get(kind=Account.Kind.CASHIER)
    assert account_balance(cashier) == Decimal("-300.00")
    with django_assert_max_num_queries(8):
        page = admin_client_.get(reverse("admin:accounts_account_changelist")).content.decode()
    assert "-300.00 EUR" in page and f"{format_money(account_balance(house), 2)} EUR" in page
    for account in (house, cashier):
        page = admin_client_.get(reverse("admin:accounts_account_change", args=[account.pk])).content.decode()
        assert f"Balance: {format_money(account_balance(account), 2)} EUR" in page


# 6. round names and search ------------------------------------------------------------------------

def test_rounds_are_named_and_searched_by_table_code(admin_client_, db):
    round_a, bets_a = play_boundless_round(1, table=BoundlessTableFactory(code="BJ-A"))
    round_b, bets_b = play_boundless_round(1, table=BoundlessTableFactory(code="BJ-B"))
    round_b.external_id = round_a.external_id
    round_b.save(update_fields=["external_id"])
    page = admin_client_.get(reverse(BETS), {"round": f"BJ-B/{round_a.external_id}"}).content.decode()
    assert lists_bet(page, bets_b[0]) and not lists_bet(page, bets_a[0])
    page = admin_client_.get(reverse("admin:tables_round_changelist"),
                             {"q": f"BJ-A/{round_a.external_id}"}).content.decode()
    assert f"BJ-A/{round_a.external_id}" in page and f"BJ-B/{round_a.external_id}" not in page
    page = admin_client_.get(reverse("admin:tables_round_change", args=[round_a.pk])).content.decode()
    assert f"BJ-A/{round_a.external_id}" in page and "BJ-A shoe" in page


# 7. resolving a dispute ---------------------------------------------------------------------------

def test_resolving_an_open_dispute_assigns_it_first(admin_client_, settled_round, admin_user):
    round_, bets = settled_round
    dispute = open_dispute(player=bets[1].player, bets=[bets[1]], reason="I should have won")
    url = reverse("admin:settlement_dispute_resolve", args=[dispute.pk])
    assert 'id="resolve-form"' in admin_client_.get(url).content.decode()
    assert admin_client_.post(url, {"decision": "upheld", "adjustment": "5.00", "reason": "video",
                                    "confirm": "1"}).status_code == 302
    dispute.refresh_from_db()
    assert dispute.status == Dispute.Status.UPHELD and dispute.assignee == admin_user
    page = admin_client_.get(url).content.decode()
    assert 'id="resolve-form"' not in page and "already decided" in page


def test_a_rejection_with_an_adjustment_is_refused_keeping_the_input(admin_client_, settled_round):
    round_, bets = settled_round
    dispute = open_dispute(player=bets[1].player, bets=[bets[1]], reason="I should have won")
    url = reverse("admin:settlement_dispute_resolve", args=[dispute.pk])
    response = admin_client_.post(url, {"decision": "rejected", "adjustment": "7.00", "reason": "my careful reason"})
    page = response.content.decode()
    assert response.status_code == 200 and "A rejected dispute takes no adjustment" in page
    assert "my careful reason" in page and 'value="7.00"' in page
    dispute.refresh_from_db()
    assert dispute.status == Dispute.Status.OPEN


def test_a_refused_resolution_keeps_the_input(admin_client_, settled_round):
    round_, bets = settled_round
    dispute = open_dispute(player=bets[1].player, bets=[bets[1]], reason="I should have won")
    url = reverse("admin:settlement_dispute_resolve", args=[dispute.pk])
    page = admin_client_.post(url, {"decision": "upheld", "adjustment": "-500.00", "confirm": "1",
                                    "reason": "a debit too big"}).content.decode()
    assert "was not resolved" in page and "a debit too big" in page
    wallet = Account.objects.select_related("currency").get(player=bets[1].player, currency="EUR")
    assert f"wallet holds {format_money(wallet.balance, wallet.currency, code=True)}: too little" in page
    assert "adjust:dispute:" not in page  # the ledger's key is not the operator's business
    dispute.refresh_from_db()
    assert dispute.status == Dispute.Status.OPEN  # the assignment rolled back with the refusal


# 8. alerts ------------------------------------------------------------------------------------------

def test_alerts_default_to_open(admin_client_, db):
    from django.utils import timezone

    Alert.objects.create(kind=Alert.Kind.SETTLEMENT_FAILED, message="still open")
    Alert.objects.create(kind=Alert.Kind.SETTLEMENT_FAILED, message="long done", acknowledged_at=timezone.now())
    page = admin_client_.get(reverse("admin:settlement_alert_changelist")).content.decode()
    assert "still open" in page and "long done" not in page
    page = admin_client_.get(reverse("admin:settlement_alert_changelist"), {"status": "all"}).content.decode()
    assert "still open" in page and "long done" in page


# 9. long timelines --------------------------------------------------------------------------------

def test_round_page_shows_the_latest_events_and_links_to_all(admin_client_, settled_round, monkeypatch):
    round_, bets = settled_round
    monkeypatch.setattr(replay_module, "MAX_EVENTS", 3)
    RoundEvent.objects.bulk_create([RoundEvent(round=round_, kind=RoundEvent.Kind.FALLBACK, actor="test",
                                               payload={"record_id": "b1", "kind": "double", "needed": "10.00"})
                                    for _ in range(5)])
    total = RoundEvent.objects.filter(round=round_).count()
    page = admin_client_.get(reverse("admin:tables_round_change", args=[round_.pk])).content.decode()
    assert f"the latest 3 of {total} events" in page
    link = f'{reverse("admin:tables_roundevent_changelist")}?round={round_.pk}'
    assert link in page
    events = admin_client_.get(link).content.decode()
    assert events.count(f"{round_.table.code}/{round_.external_id}") >= total


@pytest.mark.parametrize("name", ["settlement_settlementdetail", "settlement_roundcorrection", "settlement_alert",
                                  "settlement_dispute", "tables_roundevent", "tables_shoe", "tables_round",
                                  "accounts_account", "accounts_ledgertransaction", "wagering_bet"])
def test_lists_show_no_storage_decimals(admin_client_, settled_round, name):
    response = admin_client_.get(reverse(f"admin:{name}_changelist"))
    assert response.status_code == 200 and ".0000" not in response.content.decode()
