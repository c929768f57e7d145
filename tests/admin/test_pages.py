"""The read-only operator pages: content, CSV export, and bounded queries (5 vs 200 bets)."""

import csv
import io

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from tables.models import Table
from tests.admin.conftest import lists_bet, play_boundless_round
from tests.factories import BoundlessTableFactory, CurrencyFactory, PremiumTableFactory, otp_login


@pytest.fixture
def admin_client_(client, admin_user):
    return otp_login(client, admin_user)


def test_bet_page_shows_what_a_dispute_needs(admin_client_, settled_round):
    round_, bets = settled_round
    page = admin_client_.get(reverse("admin:wagering_bet_change", args=[bets[0].pk])).content.decode()
    for shown in ("8♣", "8♥", "3♦", "10♣", "7♠", "(auto-play)", f"stake:{bets[0].pk}", f"payout:{bets[0].pk}",
                  "Round replay", "10.00 × (1 + 1), rounded down"):
        assert shown in page, shown
    assert "Balance after" in page and "90.00" in page and "110.00" in page


def test_round_page_is_the_replay_with_timeline(admin_client_, settled_round):
    round_, bets = settled_round
    page = admin_client_.get(reverse("admin:tables_round_change", args=[round_.pk])).content.decode()
    assert "Dealer" in page and "Path 1" in page and "Timeline" in page
    assert "settled" in page and "resulted" in page and 'class="card red"' in page


def test_table_page_shows_variant_defaults(admin_client_, db):
    table = PremiumTableFactory(pay_tables={"pairs": {"mixed_pair": "6"}})
    page = admin_client_.get(reverse("admin:tables_table_change", args=[table.pk])).content.decode()
    assert "suited_trips" in page and "6:1" in page and "5:1" in page and "99.53%" in page


def test_a_played_table_keeps_its_code_currency_and_variant(admin_client_, settled_round):
    round_, _ = settled_round
    table = round_.table
    usd = CurrencyFactory(code="USD")
    for field, value in (("code", "renamed"), ("currency", usd), ("variant", "classic")):
        changed = Table.objects.get(pk=table.pk)
        setattr(changed, field, value)
        with pytest.raises(ValidationError) as caught:
            changed.full_clean()
        assert field in caught.value.message_dict and "has rounds" in caught.value.message_dict[field][0]
    page = admin_client_.get(reverse("admin:tables_table_change", args=[table.pk])).content.decode()
    assert 'name="currency"' not in page and 'name="variant"' not in page and 'name="code"' not in page
    assert 'name="name"' in page
    unplayed = BoundlessTableFactory()
    unplayed.currency = usd
    unplayed.full_clean()  # a table without rounds may still change both
    page = admin_client_.get(reverse("admin:tables_table_change", args=[unplayed.pk])).content.decode()
    assert 'name="currency"' in page and 'name="variant"' in page


def test_bet_record_filters(admin_client_, settled_round):
    round_, bets = settled_round
    url = reverse("admin:wagering_bet_changelist")
    page = admin_client_.get(url, {"player": bets[1].player.code}).content.decode()
    assert lists_bet(page, bets[1]) and not lists_bet(page, bets[0])
    page = admin_client_.get(url, {"round": round_.external_id, "outcome": "win"}).content.decode()
    assert lists_bet(page, bets[0]) and not lists_bet(page, bets[1])
    day = round_.opened_at.date().isoformat()
    page = admin_client_.get(url, {"placed_from": day, "placed_to": day, "stake_min": "5", "stake_max": "10"})
    assert all(lists_bet(page.content.decode(), b) for b in bets)
    page = admin_client_.get(url, {"placed_from": "2000-01-01", "placed_to": "2000-01-02"})
    assert page.status_code == 200 and not lists_bet(page.content.decode(), bets[0])
    assert not lists_bet(admin_client_.get(url, {"stake_min": "10.01"}).content.decode(), bets[0])


def test_csv_export_streams_the_search(admin_client_, settled_round):
    round_, bets = settled_round
    response = admin_client_.get(reverse("admin:wagering_bet_export"), {"round": round_.external_id})
    assert response.streaming
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0][0] == "bet_id" and sorted(int(r[0]) for r in rows[1:]) == [b.pk for b in bets]
    assert {r[rows[0].index("outcome")] for r in rows[1:]} == {"win", "lose"}


@pytest.mark.parametrize("query", [{"foo": "1"}, {"p": "99999"}, {"id__exact": "abc"}])
def test_csv_export_of_a_query_the_list_refuses_goes_back_to_the_list(admin_client_, query):
    response = admin_client_.get(reverse("admin:wagering_bet_export"), query)
    assert response.status_code == 302 and response["Location"] == reverse("admin:wagering_bet_changelist") + "?e=1"


@pytest.mark.parametrize("name", ["wagering_bet_changelist", "wagering_bet_export"])
def test_an_amount_beyond_decimal_range_is_ignored_not_a_500(admin_client_, settled_round, name):
    response = admin_client_.get(reverse(f"admin:{name}"), {"stake_min": "1e999999999", "stake_max": "-1e999999999"})
    assert response.status_code == 200


def test_player_page_lists_wallets_bets_and_entries(admin_client_, settled_round):
    round_, bets = settled_round
    page = admin_client_.get(reverse("admin:accounts_player_change", args=[bets[0].player_id])).content.decode()
    assert "Wallets" in page and "110.00" in page and f"payout:{bets[0].pk}" in page and round_.external_id in page


@pytest.mark.parametrize("n_bets", [5, 200])
def test_bet_record_and_replay_queries_are_bounded(admin_client_, django_assert_max_num_queries, n_bets, db):
    round_, bets = play_boundless_round(n_bets)
    with django_assert_max_num_queries(12):
        assert admin_client_.get(reverse("admin:wagering_bet_changelist")).status_code == 200
    with django_assert_max_num_queries(12):
        assert admin_client_.get(reverse("admin:tables_round_change", args=[round_.pk])).status_code == 200
    with django_assert_max_num_queries(16):
        assert admin_client_.get(reverse("admin:wagering_bet_change", args=[bets[-1].pk])).status_code == 200


@pytest.mark.parametrize("name", ["accounts_player", "accounts_operatorapicall", "wagering_bet",
                                  "wallets_walletmovement"])
def test_a_page_number_past_what_the_database_holds_is_no_500(admin_client_, settled_round, name):
    """A list's (and its objects' history's) ``?p=`` past a bigint offset is the deepest page the
    list offers, answered as any page past the rows (the third fresh attack: 500, bigint out of range)."""
    round_, bets = settled_round
    model = {"accounts_player": bets[0].player, "wagering_bet": bets[0]}.get(name)
    huge = {"p": "9" * 20}
    assert admin_client_.get(reverse(f"admin:{name}_changelist"), huge).status_code in (200, 302)
    if model is not None:
        assert admin_client_.get(reverse(f"admin:{name}_history", args=[model.pk]), huge).status_code in (200, 302, 404)


@pytest.mark.parametrize("name, query", [
    ("wagering_bet", {"player": "a\x00b"}), ("wagering_bet", {"state": "\x00"}),
    ("wagering_bet", {"type__exact": "\x00"}), ("wallets_walletmovement", {"kind": "\x00"}),
    ("tables_round", {"state": "\x00"}), ("accounts_operatorapicall", {"method": "\x00"}),
    ("axes_accesslog", {"path_info": "\x00"}), ("django_celery_beat_periodictask", {"task": "\x00"}),
    ("wagering_bet", {"a\x00b": "1"}),
    ("tables_round", {"opened_at__year": "9" * 23}), ("axes_accesslog", {"attempt_time__year": "9" * 23}),
    ("tables_round", {"opened_at__month": "x"}),
    *[(name, {lookup: "9" * 23}) for name, lookup in [
        ("accounts_account", "operator"), ("accounts_player", "operator"), ("accounts_operatorapicall", "operator"),
        ("accounts_operatorapikey", "operator"), ("accounts_operatorstaff", "operator"), ("accounts_account", "player"),
        ("auth_user", "player"), ("settlement_alert", "player"), ("settlement_alert", "round"),
        ("settlement_alert", "table"), ("settlement_dispute", "player"), ("settlement_exceptionentry", "operator"),
        ("wagering_bet", "player__id__exact"), ("tables_round", "shoe")]],
    ("wagering_bet", {"round__in": "1,-" + "9" * 23}),
])
def test_a_query_no_database_can_hold_is_a_400_on_any_admin_list(admin_client_, settled_round, name, query):
    """The third fresh attack: a NUL in any filter's value (any list, third-party ones too) and a
    huge year were a 500 on PostgreSQL; the fifth: an id beyond 64 bits in a key's filter, a 500 on
    SQLite. The site refuses them before any page reads them."""
    response = admin_client_.get(reverse(f"admin:{name}_changelist"), query)
    assert response.status_code == 400 and response["Content-Type"].startswith("text/plain"), response.status_code


@pytest.mark.parametrize("shoe", ["abc", "1e5", "-1"])
def test_a_shoe_filter_of_no_shoe_id_is_the_invalid_lookup_answer(admin_client_, settled_round, shoe):
    response = admin_client_.get(reverse("admin:tables_round_changelist"), {"shoe": shoe})
    assert response.status_code == 302 and response["Location"].endswith("?e=1")


@pytest.mark.parametrize("url", ["/admin/accounts/currency/%00/change/", "/admin/accounts/currency/a%00b/history/",
                                 "/admin/tables/studioapikey/%00/delete/"])
def test_an_address_holding_a_nul_is_a_400(admin_client_, db, url):
    """The last short fresh attack: a NUL in a text primary key of the path was a 500 on PostgreSQL."""
    response = admin_client_.get(url)
    assert response.status_code == 400 and response["Content-Type"].startswith("text/plain"), response.status_code


@pytest.mark.parametrize("name, action", [("settlement_adjustment", "approve"),
                                          ("django_celery_beat_periodictask", "enable_tasks"),
                                          ("auth_user", "delete_selected")])
@pytest.mark.parametrize("selected", ["abc", "1.5", "\x00", "9" * 20])
def test_an_action_on_no_primary_key_is_a_400(admin_client_, db, name, action, selected):
    """The last short fresh attack: a changelist action whose selected id is no primary key (``abc``,
    a bigint overflow) was a 500 on both databases; it is refused before the action runs."""
    response = admin_client_.post(reverse(f"admin:{name}_changelist"),
                                  {"action": action, "_selected_action": [selected], "index": 0})
    assert response.status_code == 400 and response["Content-Type"].startswith("text/plain"), response.status_code
