"""The bet list: filters, time-zone days, keyset pages with tied times, isolation, malformed input,
throttling."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.test import override_settings
from rest_framework.settings import api_settings

from tests.factories import BoundlessTableFactory
from tests.player_api.conftest import play
from tests.wagering.conftest import client_for
from wagering.models import Bet

pytestmark = pytest.mark.django_db


def add_bets(round_, player, n, placed_at, **fields):
    """``n`` bets of ``player`` on ``round_`` placed at ``placed_at`` (one instant for all)."""
    start = Bet.objects.count()
    return Bet.objects.bulk_create([
        Bet(round=round_, player=player, type=fields.get("type", "main"), stake=Decimal("1.00"),
            state=fields.get("state", "accepted"), idempotency_key=f"k-{start + i}", record_id=f"x-{start + i}",
            placed_at=placed_at) for i in range(n)])


def ids(response):
    return [b["id"] for b in response.json()["results"]]


def test_pages_with_tied_times_skip_and_repeat_nothing(api, alice, boundless_round):
    at = datetime(2026, 1, 1, 12, tzinfo=UTC)
    add_bets(boundless_round, alice, 7, at)
    add_bets(boundless_round, alice, 5, at - timedelta(seconds=1))
    add_bets(boundless_round, alice, 3, at + timedelta(seconds=1))
    expected = list(Bet.objects.filter(player=alice).order_by("-placed_at", "-id").values_list("pk", flat=True))
    seen, url, pages = [], "/api/v1/bets/?page_size=4&totals=1", []
    while url:
        page = api.get(url).json()
        seen += [b["id"] for b in page["results"]]
        pages.append(page)
        url = page["next"]
    assert seen == expected and len(pages) == 4
    back = api.get(pages[2]["previous"]).json()  # previous of page 3 is page 2
    assert [b["id"] for b in back["results"]] == [b["id"] for b in pages[1]["results"]]
    assert back["next"] and back["previous"]
    assert pages[0]["totals"] == pages[3]["totals"]
    assert (pages[0]["totals"][0]["count"], pages[0]["totals"][0]["open_count"]) == (0, 16)  # none settled yet


def test_day_boundaries_in_the_players_time_zone(api, alice, boundless_round):
    (late,) = add_bets(boundless_round, alice, 1, datetime(2026, 3, 30, 22, 30, tzinfo=UTC))  # 00:30 in Berlin
    berlin = api.get("/api/v1/bets/?date_from=2026-03-31&date_to=2026-03-31&tz=Europe/Berlin")
    assert ids(berlin) == [late.pk]
    assert berlin.json()["results"][0]["placed_at"] == "2026-03-31T00:30:00+02:00"
    assert ids(api.get("/api/v1/bets/?date_from=2026-03-31&date_to=2026-03-31")) == []
    assert late.pk in ids(api.get("/api/v1/bets/?date_to=2026-03-30"))
    assert ids(api.get("/api/v1/bets/?date_to=2026-03-30&tz=Europe/Berlin")) == []


def test_filters(api, alice, premium_round, boundless_round):
    def types(query):
        return sorted((b["type"], b["round"]["variant"]) for b in api.get(f"/api/v1/bets/?{query}").json()["results"])

    assert types("variant=premium") == [("main", "premium"), ("pairs", "premium")]
    assert types("type=pairs") == [("pairs", "premium")]
    assert types("state=accepted") == [("main", "boundless")]
    assert types("outcome=win") == [("main", "premium")]
    assert types(f"round={boundless_round.pk}") == [("main", "boundless")]
    assert types(f"table={premium_round.table.code}&type=main") == [("main", "premium")]
    totals = api.get("/api/v1/bets/?variant=premium&totals=true").json()["totals"]
    assert totals == [{"currency": "EUR", "count": 2, "staked": "21.00", "returned": "40.00", "net": "19.00",
                       "open_count": 0, "open_staked": "0.00"}]


def test_other_players_rows_answer_404(api, bob, premium_round):
    bobs_round = play(BoundlessTableFactory(), {"dealer": ["7D", "TC"], "player_cards": ["TH", "6C"], "bets": [
        {"id": "b", "player": "bob", "type": "main", "stake": "10.00", "actions": ["stand"]}]})
    for bet in Bet.objects.filter(player=bob):
        response = api.get(f"/api/v1/bets/{bet.pk}")
        assert response.status_code == 404 and response.json() == {"code": "not_found",
                                                                    "detail": f"no bet {bet.pk} of yours"}
    assert api.get(f"/api/v1/bets/{bet.pk + 10**6}").json()["detail"] == f"no bet {bet.pk + 10**6} of yours"
    assert {b["player"] for b in Bet.objects.filter(pk__in=ids(api.get("/api/v1/bets/"))).values("player")} == {
        premium_round.bets.get(record_id="a1").player_id}
    assert api.get(f"/api/v1/rounds/{premium_round.pk}").status_code == 200
    assert api.get(f"/api/v1/rounds/{bobs_round.pk}").status_code == 404
    assert client_for(bob.user).get(f"/api/v1/rounds/{bobs_round.pk}").status_code == 200
    for path in ("bets/0", "bets/-1", "bets/abc", "bets/99999999999999999999", "rounds/9999999", "disputes/1"):
        response = api.get(f"/api/v1/{path}")
        assert response.status_code == 404 and response.json()["code"] == "not_found", path


@pytest.mark.parametrize("query", [
    "date_from=2026-13-01", "date_from=yesterday", "tz=Mars/Olympus", "tz=../../etc/passwd", "variant=poker",
    "round=abc", "round=99999999999999999999999", "round=-1", "round=1.5", "page_size=0", "page_size=201",
    "page_size=x", "cursor=garbage", "cursor=WyJuIiwgWzFdXQ", "cursor=", "sort=id", "table=a%00b",
    "tz=Europe/Berlin%00", "%00=1", "type=main&unknown=1", "format=api", "table=a&table=b",
    "page_size=5&page_size=5", "cursor=x&cursor=y",
])
def test_malformed_queries_answer_400(api, premium_round, query):
    response = api.get(f"/api/v1/bets/?{query}")
    assert response.status_code == 400, (query, response.content)
    assert response.json()["code"] == "invalid_input" and response.json()["detail"]
    assert "\x00" not in response.json()["detail"]  # a NUL is refused as one, never echoed in a sentence


def test_ledger_rejects_unknown_parameters(api):
    assert api.get("/api/v1/ledger/?table=x").status_code == 400
    assert api.get("/api/v1/me?x=1").status_code == 400


@pytest.mark.parametrize("tz", ["Pacific/Kiritimati", "Etc/GMT%2B12"])
def test_extreme_dates_are_fine(api, premium_round, tz):
    """Midnight of the first or last day in a zone far from UTC lies outside the years 1-9999 in
    UTC: such a bound filters nothing out (no bet is that early or late)."""
    everything = [b["id"] for b in api.get("/api/v1/bets/").json()["results"]]
    for query in ("date_from=0001-01-01&date_to=9999-12-31", "date_from=0001-01-01", "date_to=9999-12-30"):
        response = api.get(f"/api/v1/bets/?{query}&tz={tz}")
        assert response.status_code == 200, response.content
        assert [b["id"] for b in response.json()["results"]] == everything, query


def test_throttled_per_player(api, bob, eur):
    # Windows start on the clock (for a day: at midnight UTC), so this test never straddles one.
    rates = {**api_settings.DEFAULT_THROTTLE_RATES, "player": "3/day"}
    with override_settings(REST_FRAMEWORK={**api_settings.user_settings, "DEFAULT_THROTTLE_RATES": rates}):
        from django.core.cache import cache
        cache.clear()
        assert [api.get("/api/v1/me").status_code for _ in range(4)] == [200, 200, 200, 429]
        refused = api.get("/api/v1/me")
        assert refused.json()["code"] == "throttled" and 1 <= int(refused["Retry-After"]) <= 86400
        assert client_for(bob.user).get("/api/v1/me").status_code == 200  # per player
    cache.clear()


@pytest.mark.postgresql
def test_throttle_counter_is_one_expiring_redis_key(db):
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    from delivery.api.throttles import _redis, count_request

    assert isinstance(caches["default"], RedisCache)  # the tests run on Redis: the pipelined path
    caches["default"].clear()
    assert [count_request("test-counter", 30) for _ in range(3)] == [1, 2, 3]
    assert 0 < _redis().ttl(caches["default"].make_key("test-counter")) <= 30
    caches["default"].clear()
