"""The player API's endpoints: /me, the bet list and its filters, a bet's detail, a round, the ledger."""

from datetime import datetime

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.selectors import ledger_entries_for_player
from delivery.api.player.serializers import LedgerEntrySerializer, PlayerBetDetailSerializer, PlayerBetSerializer
from settlement.selectors import bet_ledger_entries, bet_ledger_rows, bet_replay
from settlement.voids import void_round
from tests.factories import BoundlessTableFactory, UserFactory
from tests.player_api.conftest import play
from tests.wagering.conftest import client_for
from wagering.models import Bet
from wagering.selectors import bet_detail_row, bets_for_player, extras_of

pytestmark = pytest.mark.django_db


def test_me_shows_wallets(api, alice):
    data = api.get("/api/v1/me").json()
    assert data == {"code": "alice", "account_kind": "real", "wallets": [
        {"currency": "EUR", "minor_units": 2, "play_for_fun": False, "balance": "1000.00",
         "balance_source": "platform", "balance_unknown": None}]}


def test_only_players_get_in(eur):
    assert APIClient().get("/api/v1/me").status_code == 401
    operator = UserFactory(is_staff=True, is_superuser=True)
    response = client_for(operator).get("/api/v1/me")
    assert response.status_code == 403 and response.json()["code"] == "permission_denied"


def test_bet_list_totals_and_money(api, premium_round):
    data = api.get("/api/v1/bets/?totals=true").json()
    assert [b["type"] for b in data["results"]] == ["pairs", "main"]  # newest first
    main = data["results"][1]
    assert (main["stake"], main["staked"], main["returned"], main["net"], main["state"], main["outcome"]) == (
        "20.00", "20.00", "40.00", "20.00", "settled", "win")
    assert data["totals"] == [{"currency": "EUR", "count": 2, "staked": "21.00", "returned": "40.00", "net": "19.00",
                               "open_count": 0, "open_staked": "0.00"}]
    assert data["next"] is None and data["previous"] is None


def test_bet_list_rows_match_the_bet_serializer_and_totals_only_when_asked(api, premium_round,
                                                                          django_assert_num_queries):
    """The list's hand-written rows (``bet_row``) are exactly what ``PlayerBetSerializer`` shows,
    in the requested zone; without ``totals=true`` the list costs one query once the token is known."""
    data = api.get("/api/v1/bets/?tz=Europe/Berlin").json()
    assert data["totals"] is None
    player = Bet.objects.get(pk=data["results"][0]["id"]).player
    with timezone.override("Europe/Berlin"):
        assert data["results"] == PlayerBetSerializer(bets_for_player(player), many=True).data
    with django_assert_num_queries(1):  # the page (token remembered, throttle counters in the cache)
        api.get("/api/v1/bets/")
    with django_assert_num_queries(4) as captured:  # + the two grouped totals scans and the currencies
        api.get("/api/v1/bets/?totals=true&variant=premium")
    scans = [q["sql"] for q in captured.captured_queries if 'AS "code"' in q["sql"]]  # grouped by currency
    assert len(scans) == 2 and not any("tables_round" in sql for sql in scans)  # no join a page needs


def _detail_as_the_serializer_shows_it(bet):
    row = bet_detail_row(bet.player, bet.pk)
    bet = bets_for_player(bet.player).get(pk=bet.pk)
    bet.play, bet.ledger = bet_replay(row), bet_ledger_entries(bet)
    assert [e["id"] for e in bet_ledger_rows(row, extras_of(row))] == [e.pk for e in bet.ledger]
    return PlayerBetDetailSerializer(bet).data


def test_bet_detail_and_ledger_match_their_serializers(premium_round, boundless_round, alice, bob):
    """A bet's page (``bet_detail``) and the ledger (``ledger_entry``) are exactly what
    ``PlayerBetDetailSerializer`` and ``LedgerEntrySerializer`` show: settled and open bets, main
    bets, bets behind and side bets, JSON key order included."""
    for player in (alice, bob):
        client = client_for(player.user)
        for bet in Bet.objects.filter(player=player):
            response = client.get(f"/api/v1/bets/{bet.pk}")
            assert response.content == client.get(f"/api/v1/bets/{bet.pk}").content
            assert list(response.json().items()) == list(_detail_as_the_serializer_shows_it(bet).items())
        assert client.get("/api/v1/ledger/").json()["results"] == LedgerEntrySerializer(
            ledger_entries_for_player(player), many=True).data


def test_bet_detail_of_a_bet_behind_hides_the_seated_player(premium_round, bob):
    bet = Bet.objects.get(player=bob)
    data = client_for(bob.user).get(f"/api/v1/bets/{bet.pk}").json()
    assert data["play"]["hands"][0]["cards"] == ["TH", "9S"]
    assert data["play"]["hands"][0]["decisions"] == [{"action": "stand", "by": "player"}]
    assert data["play"]["dealer"] == {"cards": ["9D", "8C"], "score": 17, "blackjack": False, "bust": False}
    assert "carol" not in str(data) and "c1" not in str(data)
    assert [(e["key"], e["amount"]) for e in data["ledger"]] == [(f"stake:{bet.pk}", "-5.00"),
                                                                 (f"payout:{bet.pk}", "10.00")]


def test_bet_detail_before_settlement_replays_the_record(boundless_round, bob):
    bet = Bet.objects.get(player=bob)
    data = client_for(bob.user).get(f"/api/v1/bets/{bet.pk}").json()
    hand = data["play"]["hands"][0]
    assert hand["cards"] == ["TH", "6C"] and hand["decisions"] == [{"action": "stand", "by": "auto"}]
    assert data["state"] == "accepted" and data["returned"] is None
    assert "alice" not in str(data)


def test_round_detail(api, premium_round):
    data = api.get(f"/api/v1/rounds/{premium_round.pk}").json()
    assert data["result"]["dealer"]["cards"] == ["9D", "8C"]
    assert [s["seat"] for s in data["result"]["seats"]] == [1, 2]
    assert "decisions" not in data["result"]["seats"][0]["hands"][0]
    assert [b["type"] for b in data["bets"]] == ["pairs", "main"]
    assert "carol" not in str(data) and "bob" not in str(data)


def test_ledger(api, premium_round, alice):
    data = api.get("/api/v1/ledger/?page_size=2").json()
    assert len(data["results"]) == 2 and data["next"]
    rest = api.get(data["next"]).json()
    keys = [e["key"] for e in data["results"] + rest["results"]]
    assert keys[-1].startswith("test-deposit:") and len(keys) == len(set(keys)) == 4


def test_bet_detail_shows_extra_stakes_and_reads_them_only_when_there(db, django_assert_num_queries):
    """A doubled bet shows its extra stake and its ledger entries, as the serializer does; a bet
    without extras is read without asking for them, and a settled bet's dealer cards come from
    the record its stored detail names (bet with round and settlement, ledger: 2 queries)."""
    from settlement.services import settle_round
    from tests.settlement.helpers import played_round

    round_, players = played_round(bets={"double": ("main", "10.00", ["double"], None),
                                         "stand": ("main", "10.00", ["stand"], None)})
    settle_round(round_id=round_.pk)
    doubled = Bet.objects.get(round=round_, record_id="double")
    data = client_for(players["double"].user).get(f"/api/v1/bets/{doubled.pk}").json()
    assert [(x["kind"], x["amount"]) for x in data["extras"]] == [("double", "10.00")]
    assert (data["staked"], data["returned"]) == ("20.00", "40.00")
    assert [e["key"] for e in data["ledger"]] == [f"stake:{doubled.pk}", f"double:{doubled.pk}", f"payout:{doubled.pk}"]
    assert data == _detail_as_the_serializer_shows_it(doubled)
    plain = Bet.objects.get(round=round_, record_id="stand")
    client = client_for(players["stand"].user)
    assert client.get(f"/api/v1/bets/{plain.pk}").json()["extras"] == []
    with django_assert_num_queries(2):
        client.get(f"/api/v1/bets/{plain.pk}")


def test_totals_count_only_settled_money_and_show_open_stakes_apart(api, alice):
    """An open bet is no loss: it is in open_count and open_staked, not in staked or net."""
    table = BoundlessTableFactory()
    for rid, stake, settle in (("w", "6.00", True), ("o", "4.00", False)):
        play(table, {"dealer": ["7D", "TC"], "player_cards": ["TH", "6C"], "bets": [
            {"id": rid, "player": alice.game_code, "type": "main", "stake": stake, "actions": ["stand"]}]},
             settle=settle)
    assert api.get("/api/v1/bets/?totals=true").json()["totals"] == [
        {"currency": "EUR", "count": 1, "staked": "6.00", "returned": "0.00", "net": "-6.00", "open_count": 1,
         "open_staked": "4.00"}]


def test_a_resettled_bet_shows_its_correction(db):
    """A bet of a resettled round shows the detail and the dealer cards of the correction it was
    settled on, and the correction's ledger entry; as the serializer shows it."""
    from settlement.services import resettle_round, settle_round
    from tests.settlement.helpers import played_round, record_for

    bets = {"hit": ("main", "10.00", ["hit"], None)}
    round_, players = played_round(bets=bets)
    settle_round(round_id=round_.pk)
    record = {**record_for(round_, bets), "dealer": ["7D", "9C", "5H"]}  # 21: the hit's 21 pushes
    resettle_round(round_id=round_.pk, corrected_record=record, reason="misread", actor="operator:a")
    bet = Bet.objects.get(round=round_, record_id="hit")
    data = client_for(players["hit"].user).get(f"/api/v1/bets/{bet.pk}").json()
    assert data["play"]["dealer"]["cards"] == ["7D", "9C", "5H"] and data["play"]["outcome"] == "push"
    assert [e["key"] for e in data["ledger"]] == [f"stake:{bet.pk}", f"payout:{bet.pk}", f"resettle:{bet.pk}:1"]
    assert data == _detail_as_the_serializer_shows_it(bet)


def test_totals_are_over_settled_money_with_open_stakes_apart(api, alice, premium_round):
    """Issue 20, item 11: an open bet is neither lost nor won: totals count settled (and refunded)
    bets only, and show the open stakes apart."""
    from tests.factories import BoundlessTableFactory, RoundFactory
    from wagering.placement import place_bet

    round_ = RoundFactory(table=BoundlessTableFactory())
    place_bet(round_id=round_.pk, key="open-1", player=alice.game_code, type="main", stake="9.00")
    totals = api.get("/api/v1/bets/?totals=true").json()["totals"]
    assert totals == [{"currency": "EUR", "count": 2, "staked": "21.00", "returned": "40.00", "net": "19.00",
                       "open_count": 1, "open_staked": "9.00"}]


def test_allow_does_not_list_options_which_answers_405(api, premium_round):
    """Issue 20, item 16: the player and operator APIs refuse OPTIONS; their Allow header says so."""
    response = api.options("/api/v1/bets/")
    assert response.status_code == 405 and "OPTIONS" not in response["Allow"]
    assert "OPTIONS" not in api.post("/api/v1/bets/", {}, format="json")["Allow"]


def test_explanations_say_rounded_only_when_rounded():
    """Issue 20, item 16: "(winnings rounded down)" only when some winnings were rounded."""
    from tables.engine import settle

    record = {"format": "round-record/1", "variant": "boundless", "round": "R", "shoe_round": 1, "currency": "EUR",
              "dealer": ["7D", "TC"], "player_cards": ["AH", "KS"],
              "bets": [{"id": "even", "player": "p", "type": "main", "stake": "10.00", "actions": []},
                       {"id": "odd", "player": "p", "type": "main", "stake": "0.25", "actions": []}]}
    result = settle(record)
    assert not result.bets["even"].explanation.endswith("(winnings rounded down)")
    assert result.bets["odd"].explanation.endswith("(winnings rounded down)")


def test_bet_detail_and_ledger_show_their_times_in_tz(api, premium_round, alice):
    """Issue 20, item 16: ``tz`` works on a bet's detail and on the ledger as on the bet list (an
    unknown zone is a 400 there too)."""
    bet = Bet.objects.filter(player=alice, type="main").get()
    utc, berlin = (api.get(f"/api/v1/bets/{bet.pk}{query}").json() for query in ("", "?tz=Europe/Berlin"))
    times = lambda data: [data["placed_at"], data["settled_at"], *(e["created_at"] for e in data["ledger"])]  # noqa: E731
    assert all(t.endswith("Z") for t in times(utc)) and all(t.endswith(("+01:00", "+02:00")) for t in times(berlin))
    assert [datetime.fromisoformat(t) for t in times(utc)] == [datetime.fromisoformat(t) for t in times(berlin)]
    ledger = api.get("/api/v1/ledger/?tz=America/New_York").json()["results"]
    assert ledger and all(e["created_at"].endswith(("-05:00", "-04:00")) for e in ledger)
    for url in (f"/api/v1/bets/{bet.pk}?tz=Mars/Olympus", "/api/v1/ledger/?tz=localtime",
                f"/api/v1/bets/{bet.pk}?tz=UTC&tz=Europe/Berlin", "/api/v1/bets/?tz=UTC&tz=UTC"):  # once only
        response = api.get(url)
        assert response.status_code == 400 and response.json()["code"] == "invalid_input", url


@pytest.mark.parametrize("fixture", ["premium_round", "boundless_round"])
def test_a_voided_bet_shows_its_stakes_returned_and_no_win(request, fixture, alice):
    """Issue 20, item 16: voided after settlement (a win taken back) or before (a record taken,
    not settled), a bet's detail shows the cards as played, every stake returned, outcome void, no
    odds, and says why: nothing of the win the record would have paid."""
    round_ = request.getfixturevalue(fixture)
    void_round(round_id=round_.pk, reason="the studio's video shows a dealing error", actor="test")
    bet = Bet.objects.get(player=alice, type="main")
    data = client_for(alice.user).get(f"/api/v1/bets/{bet.pk}").json()
    play = data["play"]
    assert data["state"] == "refunded" and data["returned"] == data["staked"] == play["staked"]
    assert (play["outcome"], play["returned"]) == ("void", play["staked"])
    assert play["hands"] and all((h["outcome"], h["returned"], h["odds"]) == ("void", h["stake"], None)
                                 for h in play["hands"])
    assert play["explanation"] == f"round voided: {play['staked']} staked, refunded in full (RULES 10)"
    assert play["hands"][0]["cards"]  # as played
