"""The operators' everyday pages (issue 19): the Bet Record, its CSV and the dispute panel with
staked (extras included), returned and net; CSV formula injection neutralised; player search by
prefix in any case with a bounded count; the dispute queue; the round's timeline, void and
resettle pages; and the exception report, its filters and CSV, scoped to the operator."""

import csv
import io
import json
import re
from decimal import Decimal

import pytest
from django.urls import reverse

from accounts.operators import create_operator
from adminkit import paginator
from adminkit.export import neutralised
from adminkit.roles import SUPERVISOR, VIEWER
from settlement.disputes import decide_dispute, open_dispute
from settlement.models import ExceptionEntry
from settlement.services import settle_round
from settlement.voids import void_round
from tests.admin.conftest import B_MARKERS, staff_of, two_operators
from tests.factories import CurrencyFactory, PlayerFactory, make_operator, otp_login
from tests.settlement.helpers import played_round
from wagering.models import Bet

pytestmark = pytest.mark.django_db


def _text(response):
    if response.streaming:
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def _csv(response):
    rows = list(csv.reader(io.StringIO(_text(response))))
    return [dict(zip(rows[0], row)) for row in rows[1:]]


@pytest.fixture
def provider_client(client):
    otp_login(client, make_operator(SUPERVISOR, username="provider"))
    return client


@pytest.fixture
def doubled(db):
    """A settled round whose ``double`` bet staked 10.00 + 10.00 and got 40.00 back."""
    round_, players = played_round()
    settle_round(round_id=round_.pk)
    return round_, {b.record_id: b for b in round_.bets.select_related("player__operator")}


# --- the Bet Record, its CSV and the dispute panel -------------------------------------------------

def test_bet_record_list_and_csv_show_staked_returned_net_outcome_operator(provider_client, doubled):
    round_, bets = doubled
    page = _text(provider_client.get(reverse("admin:wagering_bet_changelist"), {"round": str(round_.pk)}))
    assert "staked" in page and "net" in page and "40.00" in page and "-10.00" in page
    rows = {r["record_id"]: r for r in _csv(provider_client.get(reverse("admin:wagering_bet_export"),
                                                                {"round": str(round_.pk)}))}
    double, stand = rows["double"], rows["stand"]
    assert (double["stake"], double["staked"], double["returned"], double["net"]) == ("10.00", "20.00", "40.00",
                                                                                      "20.00")
    assert (stand["staked"], stand["returned"], stand["net"], stand["outcome"]) == ("10.00", "0.00", "-10.00", "lose")
    assert double["operator"] == bets["double"].player.operator.code
    assert sum(Decimal(r["net"]) for r in rows.values()) == sum(
        (b.returned - b.stake for b in bets.values()), Decimal(0)) - Decimal(10)  # the double's extra stake


def test_dispute_panel_shows_the_disputed_bets_money_and_highlights_them(provider_client, doubled):
    round_, bets = doubled
    dispute = open_dispute(player=bets["double"].player, bets=[bets["double"]], reason="my double was short")
    page = _text(provider_client.get(reverse("admin:settlement_dispute_change", args=[dispute.pk])))
    work = page[page.index('id="dispute-work"'):page.index('id="replay-side"')]
    assert "20.00 EUR" in work and "40.00" in work and ">20.00<" in work  # staked, returned, net
    assert "shown to the player" in work
    replay = page[page.index('id="replay-side"'):]
    highlighted = replay[replay.index('class="highlighted"'):]
    assert f'/admin/wagering/bet/{bets["double"].pk}/change/' in highlighted[:400]
    assert replay.count('class="highlighted"') == 1


def test_dispute_queue_shows_reason_amount_at_stake_age_and_player(provider_client, doubled):
    round_, bets = doubled
    open_dispute(player=bets["double"].player, bets=[bets["double"]], reason="my double was short")
    page = _text(provider_client.get(reverse("admin:settlement_dispute_changelist")))
    for shown in ("my double was short", "20.00 EUR", bets["double"].player.code, "At stake", "Age", "0\xa0minutes"):
        assert shown in page, shown


@pytest.mark.parametrize("value, cell", [
    ('=HYPERLINK("http://evil.example","x")', '\'=HYPERLINK("http://evil.example","x")'),
    ("+1", "'+1"), ("-1+2", "'-1+2"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("-10.00", "-10.00"),
    ("b0", "b0"), (Decimal("-3"), Decimal("-3")), (7, 7),
    (" =1+1", "' =1+1"), ("\n=1+1", "'\n=1+1"), ("|cmd", "'|cmd"), ("a =1", "a =1")])  # the seventh fresh attack
def test_formula_like_text_is_neutralised_and_numbers_are_not(value, cell):
    assert neutralised(value) == cell


def test_the_bet_record_csv_exports_a_formula_record_id_as_text(provider_client, doubled):
    round_, bets = doubled
    evil = '=HYPERLINK("http://evil.example","x")'
    Bet.objects.filter(pk=bets["hit"].pk).update(record_id=evil)
    rows = _csv(provider_client.get(reverse("admin:wagering_bet_export"), {"round": str(round_.pk)}))
    assert f"'{evil}" in [r["record_id"] for r in rows] and evil not in [r["record_id"] for r in rows]


# --- player search ---------------------------------------------------------------------------------

@pytest.fixture
def demo_players(db):
    CurrencyFactory(code="EUR")
    a, _ = create_operator(code="brand-alpha", name="Alpha Casino", currencies=["EUR"])
    b, _ = create_operator(code="brand-beta", name="Beta Casino", currencies=["EUR"])
    for code in ("DEMO-REAL-0001", "demo-real-0002", "demo-fun-0001"):
        PlayerFactory(operator=a, code=code)
    PlayerFactory(operator=b, code="demo-real-0003")
    return a, b


def test_player_search_finds_by_prefix_in_any_case_within_the_operator(client, demo_players):
    a, _ = demo_players
    otp_login(client, staff_of(a, VIEWER, "alpha_viewer"))
    url = reverse("admin:accounts_player_changelist")
    for term in ("demo-real-000", "DEMO-REAL-0001", "Demo-Real"):
        page = _text(client.get(url, {"q": term}))
        assert "DEMO-REAL-0001" in page and "demo-real-0003" not in page and "demo-fun-0001" not in page, term
    page = _text(client.get(url, {"q": "demo-real-000"}))
    assert "2 players" in page and "demo-real-0002" in page
    page = _text(client.get(url, {"q": "brand-alpha:demo-fun"}))  # the game code's start
    assert "demo-fun-0001" in page and "1 player" in page


def test_player_list_counts_up_to_a_bound_then_says_more_than(provider_client, demo_players, monkeypatch):
    monkeypatch.setattr(paginator, "COUNT_UP_TO", 2)
    url = reverse("admin:accounts_player_changelist")
    assert "more than 2 players" in _text(provider_client.get(url, {"q": "demo-"}))
    assert "1 player" in _text(provider_client.get(url, {"q": "demo-fun"}))


def test_bet_record_player_filter_takes_a_prefix_in_any_case(provider_client, doubled):
    round_, bets = doubled
    code = bets["double"].player.code
    rows = _csv(provider_client.get(reverse("admin:wagering_bet_export"), {"player": code.upper()}))
    assert [r["record_id"] for r in rows] == ["double"]
    rows = _csv(provider_client.get(reverse("admin:wagering_bet_export"), {"player": code[:2].upper()}))
    assert {r["record_id"] for r in rows} == set(bets)


# --- the round's pages -----------------------------------------------------------------------------

def test_timeline_is_readable_lines(provider_client, doubled):
    round_, bets = doubled
    page = _text(provider_client.get(reverse("admin:tables_round_change", args=[round_.pk])))
    lines = re.findall(r'<td class="event-line">([^<]*)</td>', page)
    assert any(line.startswith("Bet placed: bet") and "stake 10.00" in line for line in lines)
    assert any(line.startswith("Extra stake:") and "amount 10.00" in line for line in lines)
    assert any(line.startswith("Settled:") and "returned 65.00" in line for line in lines), lines
    assert not any("{" in line or "=" in line or "&#x27;" in line for line in lines)


def test_a_voided_round_offers_no_void_form(provider_client, doubled):
    round_, _ = doubled
    void_url = reverse("admin:tables_round_void", args=[round_.pk])
    assert 'name="reason"' in _text(provider_client.get(void_url))
    void_round(round_id=round_.pk, reason="dealer error", actor="test")
    page = _text(provider_client.get(void_url))
    assert "already voided" in page and 'name="reason"' not in page
    assert void_url not in _text(provider_client.get(reverse("admin:tables_round_change", args=[round_.pk])))


def test_a_resettle_with_the_current_record_says_so_and_offers_no_confirm(provider_client, doubled):
    round_, _ = doubled
    url = reverse("admin:tables_round_resettle", args=[round_.pk])
    page = _text(provider_client.post(url, {"record": json.dumps(round_.record), "reason": "check",
                                            "after_sequence": "0"}))
    assert "is the record it is settled on: nothing to resettle" in page and 'name="confirm"' not in page
    assert not round_.corrections.exists()


# --- the exception report --------------------------------------------------------------------------

@pytest.fixture
def ab(db):
    return two_operators()


def test_exception_report_lines_of_a_void_hold_each_operators_money(ab):
    void_round(round_id=ab.shared.pk, reason="shoe misdealt", actor=ab.provider)
    lines = {line.operator_id: line for line in ExceptionEntry.objects.filter(kind=ExceptionEntry.Kind.REVERSAL)}
    assert set(lines) == {ab.a.pk, ab.b.pk}
    a_line = lines[ab.a.pk]
    assert a_line.before["bets"] == 2 and a_line.before["staked"] == "20.00" and a_line.before["state"] == "settled"
    assert a_line.after["state"] == "voided" and a_line.after["returned"] == "20.00"
    assert a_line.action.reason == "shoe misdealt" and a_line.action.actor == ab.provider
    assert a_line.transactions and a_line.amount == Decimal(a_line.after["returned"]) - Decimal(
        a_line.before["returned"])


def test_exception_report_of_a_dispute_decision_and_an_adjustment(ab):
    decide_dispute(dispute=ab.a_dispute, upheld=True, resolution="dealer misread", adjustment="5.00",
                   actor=ab.provider)
    line = ExceptionEntry.objects.get(kind=ExceptionEntry.Kind.DISPUTE_DECISION)
    assert line.operator_id == ab.a.pk and line.dispute == ab.a_dispute and line.amount == Decimal("5.00")
    assert line.before["status"] == "investigating"
    assert (line.after["status"], line.after["adjustment"]) == ("upheld", "5.00")
    assert Decimal(line.after["balance"]) - Decimal(line.before["balance"]) == Decimal("5.00")
    adjustment = ExceptionEntry.objects.get(kind=ExceptionEntry.Kind.ADJUSTMENT, operator=ab.a)
    assert adjustment.action.reason == "alpha goodwill" and len(adjustment.transactions) == 1


def test_exception_report_page_and_csv_as_provider_and_as_operator_staff(client, ab):
    void_round(round_id=ab.shared.pk, reason="shoe misdealt", actor=ab.provider)
    otp_login(client, ab.provider)
    page = _text(client.get(reverse("admin:settlement_exceptionentry_changelist")))
    assert "alpha goodwill" in page and "beta goodwill" in page and "shoe misdealt" in page
    rows = _csv(client.get(reverse("admin:settlement_exceptionentry_export")))
    assert {r["operator"] for r in rows} == {"brand-alpha", "brand-beta"}
    assert {r["kind"] for r in rows} == {"adjustment", "resettle", "reversal"}
    filtered = _csv(client.get(reverse("admin:settlement_exceptionentry_export"), {"kind__exact": "reversal"}))
    assert len(filtered) == 2 and all(r["reason"] == "shoe misdealt" and r["transactions"] for r in filtered)

    otp_login(client, staff_of(ab.a, VIEWER, "alpha_viewer"))
    page = _text(client.get(reverse("admin:settlement_exceptionentry_changelist")))
    assert "alpha goodwill" in page and not any(marker in page for marker in B_MARKERS)
    export = _text(client.get(reverse("admin:settlement_exceptionentry_export")))
    assert not any(marker in export for marker in B_MARKERS)
    rows = _csv(client.get(reverse("admin:settlement_exceptionentry_export")))
    assert {r["operator"] for r in rows} == {"brand-alpha"} and {r["kind"] for r in rows} == {"adjustment", "reversal"}
    b_line = ExceptionEntry.objects.filter(operator=ab.b).first()
    assert client.get(reverse("admin:settlement_exceptionentry_change", args=[b_line.pk])).status_code in (302, 404)
