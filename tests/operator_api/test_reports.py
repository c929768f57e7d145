"""The operator API's daily report (``GET reports/daily``) and its bet list's totals from the
rollups: only the caller's brand, days of its zone, filters, and the same totals the bets give."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import Operator
from settlement.voids import void_round
from tests.factories import BoundlessTableFactory
from tests.player_api.conftest import play
from wagering.models import Bet
from wagering.selectors import bet_totals

pytestmark = pytest.mark.django_db


def test_the_daily_report_shows_the_callers_brand_only(api, bolt_api, shared_round, bolt_round):
    today = str(timezone.localdate())
    acme = api.get("/api/operator/v1/reports/daily").json()
    assert acme["days"] == [{"day": today, "currency": "EUR", "rounds": 1, "bets": 1, "players": 1,
                             "turnover": "10.00", "returned": "20.00", "ggr": "-10.00", "hold": "-100.00",
                             "refunded_bets": 0, "refunded": "0.00", "adjustments": 0, "adjusted": "0.00"}]
    assert acme["totals"] == [{**acme["days"][0], "day": None}]
    bolt = bolt_api.get("/api/operator/v1/reports/daily").json()
    assert [(d["rounds"], d["bets"], d["turnover"], d["ggr"], d["hold"]) for d in bolt["days"]] == [
        (2, 2, "8.00", "8.00", "100.00")]


def test_the_daily_report_filters_and_refuses_bad_input(api, acme, shared_round):
    other = BoundlessTableFactory()
    assert api.get(f"/api/operator/v1/reports/daily?table={other.code}").json() == {"days": [], "totals": []}
    assert api.get("/api/operator/v1/reports/daily?currency=USD").json()["days"] == []
    yesterday = str(timezone.localdate() - timedelta(days=1))
    assert api.get(f"/api/operator/v1/reports/daily?date_to={yesterday}").json()["days"] == []
    for bad in ("date_from=2026-13-01", "date_from=2026-03-02&date_to=2026-03-01", "currency=eur", "tz=UTC",
                "table="):
        answer = api.get(f"/api/operator/v1/reports/daily?{bad}")
        assert answer.status_code == 400 and answer.json()["code"] == "invalid_input", bad


@pytest.mark.parametrize(("query", "days"), [("date_to=0001-01-01", 0), ("date_to=0001-01-29", 0),
                                             ("date_from=0001-01-01&date_to=9999-12-31", 1)])
def test_the_daily_report_takes_the_first_and_last_days_of_the_calendar(api, acme, shared_round, query, days):
    answer = api.get(f"/api/operator/v1/reports/daily?{query}")
    assert answer.status_code == 200 and len(answer.json()["days"]) == days


def test_a_day_is_the_operators_day(api, acme, shared_round):
    Operator.objects.filter(pk=acme[0].pk).update(time_zone="Pacific/Kiritimati")  # UTC+14
    Bet.objects.filter(player__operator=acme[0]).update(placed_at=timezone.now().replace(hour=11))
    from wagering.rollups import rebuild
    day = timezone.localdate()
    rebuild(day_from=day - timedelta(days=1), day_to=day + timedelta(days=1))
    assert [d["day"] for d in api.get(f"/api/operator/v1/reports/daily?date_to={day + timedelta(days=1)}")
            .json()["days"]] == [str(day + timedelta(days=1))]


@pytest.mark.parametrize("query", ["", "table={table}", "variant=boundless", "type=main", "state=settled",
                                   "state=refunded", "state=accepted", "date_from={today}&date_to={today}",
                                   "player=p1", "outcome=win"])
def test_bet_list_totals_from_the_rollups_equal_the_bets(api, acme, shared_round, query):
    operator, _, players = acme
    table = shared_round.table
    voided = play(table, {"dealer": ["7D", "TC"], "player_cards": ["TH", "6C"],
                          "bets": [{"id": "v", "player": "acme:p2", "type": "main", "stake": "4.00",
                                    "actions": ["stand"]}]})
    void_round(round_id=voided.pk, reason="fault", actor="test")
    play(table, {"dealer": ["7D", "TC"], "player_cards": ["TH", "6C"],
                 "bets": [{"id": "o", "player": "acme:p1", "type": "main", "stake": "3.00", "actions": ["stand"]}]},
         settle=False)  # still open: apart
    query = query.format(table=table.code, today=timezone.localdate())
    totals = api.get(f"/api/operator/v1/bets/?totals=true&{query}").json()["totals"]
    from delivery.api.operator.filters import OperatorBetFilter
    filterset = OperatorBetFilter(data=dict(p.split("=") for p in query.split("&") if p),
                                  queryset=Bet.objects.filter(player__operator=operator))
    assert filterset.is_valid()
    expected = [{"currency": t.currency.code, "count": t.count, "staked": f"{t.staked:.2f}",
                 "returned": f"{t.returned:.2f}", "net": f"{t.net:.2f}", "open_count": t.open_count,
                 "open_staked": f"{t.open_staked:.2f}"} for t in bet_totals(filterset.qs)]
    assert totals == expected
    assert query != "" or totals == [{"currency": "EUR", "count": 2, "staked": "14.00", "returned": "24.00",
                                      "net": "10.00", "open_count": 1, "open_staked": "3.00"}]
