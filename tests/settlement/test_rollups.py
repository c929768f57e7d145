"""The rollups (wagering.rollups, docs/reports.md) as the settlement services keep them: what a
settlement, a resettle, a void, a refund at the close and an adjustment count, on which day (the
operator's), concurrently, and the rebuild that recomputes them."""

import threading
from datetime import date, datetime, timedelta
from decimal import Decimal
from io import StringIO
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command
from django.db import close_old_connections, connection
from django.utils import timezone

from accounts.models import Operator
from adminkit.roles import SUPERVISOR
from settlement.adjustments import approve_adjustment
from settlement.disputes import decide_dispute, manual_adjustment, open_dispute
from settlement.results import record_result
from settlement.services import resettle_round, settle_round
from settlement.voids import cancel, void_round
from tests.factories import (
    BoundlessTableFactory,
    PlayerFactory,
    RoundFactory,
    UserFactory,
    make_operator,
    operator_with_players,
    scan,
)
from tests.rollups_scan import full_scan, kept
from wagering import rollups
from wagering.closing import close_betting
from wagering.models import Bet, DailyAdjustment, DailyPlayer, DailyRollup, DailyRound
from wagering.placement import place_bets
from wagering.rollups import rebuild

from .helpers import BETS, FUNDS, played_round, record_for

pytestmark = pytest.mark.django_db


def rows():
    """``{bet type: DailyRollup}`` of the only operator-day-table there is."""
    return {r.bet_type: r for r in DailyRollup.objects.all()}


def assert_scan_equals_kept():
    assert kept() == full_scan()


def test_a_settled_round_counts_its_bets_stakes_with_extras_returns_and_rtp_measure():
    round_, _ = played_round()
    settle_round(round_id=round_.pk)
    main, bust = rows()["main"], rows()["bust_bonus"]
    assert (main.bets, main.turnover, main.returned) == (5, Decimal("60.00"), Decimal("65.00"))  # the double's 10 in
    assert (main.rtp_staked, main.rtp_returned) == (Decimal("50.00"), Decimal("55.00"))  # its extra stake's share out
    assert (bust.bets, bust.turnover, bust.returned, bust.refunded) == (1, Decimal("1.00"), 0, 0)
    assert main.day == timezone.localdate() and main.operator.code == "default"
    assert DailyRound.objects.filter(round=round_).count() == 1
    assert DailyPlayer.objects.count() == len(BETS)
    assert_scan_equals_kept()


def test_settling_twice_counts_once():
    round_, _ = played_round()
    settle_round(round_id=round_.pk)
    settle_round(round_id=round_.pk)
    assert rows()["main"].bets == 5 and DailyRound.objects.count() == 1


def test_a_resettle_changes_the_day_its_bets_were_placed_on_not_today():
    round_, _ = played_round()
    yesterday = timezone.now() - timedelta(days=1)
    Bet.objects.filter(round=round_).update(placed_at=yesterday)
    DailyPlayer.objects.update(day=timezone.localdate(yesterday))  # as if betting had closed yesterday
    settle_round(round_id=round_.pk)
    corrected = record_for(round_, dealer=["7D", "TC"], player_cards=["TH", "9C", "5S"])  # 19 stands, 24 busts
    resettle_round(round_id=round_.pk, corrected_record=corrected, reason="misread 6C", actor="test")
    assert set(DailyRollup.objects.values_list("day", flat=True)) == {timezone.localdate(yesterday)}
    assert rows()["main"].returned == sum(Bet.objects.filter(round=round_, type="main").values_list("returned",
                                                                                                   flat=True))
    assert_scan_equals_kept()


def test_a_void_of_a_settled_round_takes_its_bets_out_and_counts_the_refunds():
    round_, _ = played_round()
    settle_round(round_id=round_.pk)
    void_round(round_id=round_.pk, reason="proven fault", actor="test")
    main = rows()["main"]
    assert (main.bets, main.turnover, main.returned) == (0, 0, 0)
    assert (main.refunded_bets, main.refunded) == (5, Decimal("60.00"))
    assert not DailyRound.objects.exists() and DailyPlayer.objects.count() == len(BETS)
    assert_scan_equals_kept()


def test_a_round_cancelled_before_the_close_counts_refunds_and_players():
    round_ = RoundFactory(table=BoundlessTableFactory())
    player = PlayerFactory(funded="50.00")
    place_bets(round_id=round_.pk, bets=[{"key": "k1", "player": player.code, "type": "main", "stake": "10.00"}])
    cancel(round_id=round_.pk, reason="studio fault", actor="test")
    main = rows()["main"]
    assert (main.bets, main.refunded_bets, main.refunded) == (0, 1, Decimal("10.00"))
    assert list(DailyPlayer.objects.values_list("player_id", flat=True)) == [player.pk]
    assert_scan_equals_kept()


def test_a_day_is_the_operators_day():
    """A bet placed at 12:00 UTC on 1 March is Auckland's 2 March (UTC+13)."""
    operator = Operator.objects.get(code="default")
    Operator.objects.filter(pk=operator.pk).update(time_zone="Pacific/Auckland")
    round_, _ = played_round()
    Bet.objects.filter(round=round_).update(placed_at=datetime(2026, 3, 1, 12, tzinfo=ZoneInfo("UTC")))
    DailyPlayer.objects.update(day=date(2026, 3, 2))  # as if betting had closed then
    settle_round(round_id=round_.pk)
    assert set(DailyRollup.objects.values_list("day", flat=True)) == {date(2026, 3, 2)}
    assert set(DailyRound.objects.values_list("day", flat=True)) == {date(2026, 3, 2)}
    assert_scan_equals_kept()


def test_a_round_across_the_operators_midnight_counts_each_bet_on_its_own_day():
    """Bets placed at 23:50 and at 00:10 in Auckland: two days, each with its bets and the round."""
    Operator.objects.filter(code="default").update(time_zone="Pacific/Auckland")
    round_, _ = played_round()
    late = datetime(2026, 3, 1, 23, 50, tzinfo=ZoneInfo("Pacific/Auckland"))
    Bet.objects.filter(round=round_).update(placed_at=late)
    Bet.objects.filter(round=round_, record_id__in=["hit", "bust"]).update(placed_at=late + timedelta(minutes=20))
    DailyPlayer.objects.all().delete()
    rollups.players_of(round_)  # as if betting had closed then
    settle_round(round_id=round_.pk)
    assert set(DailyRollup.objects.values_list("day", "bet_type", "bets")) == {
        (date(2026, 3, 1), "main", 4), (date(2026, 3, 2), "main", 1), (date(2026, 3, 2), "bust_bonus", 1)}
    assert set(DailyRound.objects.values_list("day", flat=True)) == {date(2026, 3, 1), date(2026, 3, 2)}
    assert_scan_equals_kept()


def test_the_operators_of_one_round_count_it_on_their_own_days():
    """At 12:00 UTC on 1 March the default operator (UTC) is on 1 March, acme (Auckland) on 2 March."""
    acme, _, brand = operator_with_players("acme", ["p1", "p2"], funded=str(FUNDS))
    Operator.objects.filter(pk=acme.pk).update(time_zone="Pacific/Auckland")
    round_, _ = played_round(players={"hit": brand["p1"], "bust": brand["p2"]})
    Bet.objects.filter(round=round_).update(placed_at=datetime(2026, 3, 1, 12, tzinfo=ZoneInfo("UTC")))
    DailyPlayer.objects.all().delete()
    rollups.players_of(round_)
    settle_round(round_id=round_.pk)
    assert set(DailyRollup.objects.values_list("day", "operator__code", "bet_type", "bets", "returned")) == {
        (date(2026, 3, 1), "default", "main", 4, Decimal("45.00")),
        (date(2026, 3, 2), "acme", "main", 1, Decimal("20.00")),
        (date(2026, 3, 2), "acme", "bust_bonus", 1, Decimal("0.00"))}
    assert set(DailyRound.objects.values_list("day", "operator__code")) == {(date(2026, 3, 1), "default"),
                                                                           (date(2026, 3, 2), "acme")}
    assert_scan_equals_kept()


def test_adjustments_count_apart_on_the_day_they_are_made():
    round_, players = played_round()
    settle_round(round_id=round_.pk)
    supervisor = UserFactory(is_superuser=True)
    manual_adjustment(player=players["stand"], currency="EUR", amount="-3.00", reason="goodwill back", actor="t",
                      key="a1")
    manual_adjustment(player=players["stand"], currency="EUR", amount="-3.00", reason="again", actor="t", key="a1")
    dispute = open_dispute(player=players["hit"], bets=[Bet.objects.get(record_id="hit")], reason="wrong card")
    decide_dispute(dispute=dispute, upheld=True, resolution="card misread", adjustment="7.50", actor=supervisor)
    row = DailyAdjustment.objects.get()
    assert (row.adjustments, row.adjusted, row.day) == (2, Decimal("4.50"), timezone.localdate())
    assert rows()["main"].returned == Decimal("65.00")  # GGR unchanged
    assert_scan_equals_kept()


def test_an_adjustment_awaiting_a_second_supervisor_counts_once_approved(settings):
    settings.ADJUSTMENT_APPROVAL_THRESHOLD = Decimal("5.00")
    round_, players = played_round()
    settle_round(round_id=round_.pk)
    boss, other = make_operator(SUPERVISOR), make_operator(SUPERVISOR, username="boss2")
    pending = manual_adjustment(player=players["stand"], currency="EUR", amount="-8.00", reason="goodwill back",
                                actor=boss, key="big")
    assert pending.status == "pending" and not DailyAdjustment.objects.exists()
    approve_adjustment(adjustment=pending, actor=other, reason="checked")
    approve_adjustment(adjustment=pending, actor=other, reason="again")  # posted once, counted once
    row = DailyAdjustment.objects.get()
    assert (row.adjustments, row.adjusted, row.day) == (1, Decimal("-8.00"), timezone.localdate())
    assert_scan_equals_kept()


def test_rebuild_recomputes_a_range_and_says_what_differed():
    round_, _ = played_round()
    settle_round(round_id=round_.pk)
    today = timezone.localdate()
    assert [c.differences for c in rebuild(day_from=today, day_to=today, write=False)] == [[]]
    DailyRollup.objects.filter(bet_type="main").update(returned=0)
    DailyRound.objects.all().delete()
    out = StringIO()
    with pytest.raises(SystemExit) as exit_code:
        call_command("rebuild_rollups", "--from", str(today), "--to", str(today), "--check", stdout=out)
    assert exit_code.value.code == 1 and "differs (not written: --check)" in out.getvalue()
    assert rows()["main"].returned == 0 and not DailyRound.objects.exists()  # --check writes nothing
    call_command("rebuild_rollups", "--from", str(today), "--to", str(today), stdout=out)
    assert rows()["main"].returned == Decimal("65.00") and DailyRound.objects.count() == 1
    out = StringIO()
    call_command("rebuild_rollups", "--from", str(today), "--to", str(today), "--check", stdout=out)
    assert "1 operator-day(s) checked, all equal" in out.getvalue()


def test_rebuild_counts_the_players_of_a_round_once_its_betting_closed():
    """A round still open for betting counts no player yet (``DailyPlayer``: added at the close):
    its bets are no difference; once betting closed, they count on both sides."""
    round_ = RoundFactory(table=BoundlessTableFactory())
    player = PlayerFactory(funded="50.00")
    place_bets(round_id=round_.pk, bets=[{"key": "k1", "player": player.code, "type": "main", "stake": "10.00"}])
    today = timezone.localdate()
    assert [c.differences for c in rebuild(day_from=today, day_to=today, write=False)] == []
    close_betting(round_id=round_.pk)
    assert DailyPlayer.objects.count() == 1
    assert [c.differences for c in rebuild(day_from=today, day_to=today, write=False)] == [[]]


@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "Pacific/Pago_Pago"])  # UTC+14, UTC-11
def test_rebuild_checks_the_first_and_last_days_of_the_calendar(zone):
    Operator.objects.filter(code="default").update(time_zone=zone)
    for day in ("0001-01-01", "9999-12-31"):
        out = StringIO()
        call_command("rebuild_rollups", "--from", day, "--to", day, "--check", stdout=out)
        assert "0 operator-day(s) checked, all equal" in out.getvalue()


def test_rebuild_refuses_bad_dates():
    from django.core.management.base import CommandError
    with pytest.raises(CommandError, match="YYYY-MM-DD"):
        call_command("rebuild_rollups", "--from", "2026-13-01", "--to", "2026-01-01")
    with pytest.raises(CommandError, match="after"):
        call_command("rebuild_rollups", "--from", "2026-02-01", "--to", "2026-01-01")


@pytest.mark.django_db(transaction=True)
def test_two_settlements_of_one_day_and_table_at_once_lose_nothing():
    """Two rounds of one table settled in two threads at the same moment, each in its own
    transaction: both are counted (PostgreSQL: the upsert's increments; SQLite: one writer)."""
    table = BoundlessTableFactory()
    rounds = []
    for _ in range(2):
        round_, _ = played_round(table)
        rounds.append(round_)
    start = threading.Barrier(2)
    errors = []

    def settle(round_id):
        try:
            start.wait(10)
            settle_round(round_id=round_id)
        except Exception as e:  # reported below, with the thread's own traceback lost
            errors.append(e)
        finally:
            connection.close()

    threads = [threading.Thread(target=settle, args=(r.pk,)) for r in rounds]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    close_old_connections()
    assert not errors
    main = rows()["main"]
    assert (main.bets, main.turnover, main.returned) == (10, Decimal("120.00"), Decimal("130.00"))
    assert DailyRound.objects.count() == 2
    assert_scan_equals_kept()


def test_each_currency_has_rows_of_its_own():
    usd = BoundlessTableFactory(currency__code="USD")
    eur_round, _ = played_round()
    settle_round(round_id=eur_round.pk)
    round_ = RoundFactory(table=usd)
    player = PlayerFactory(funded="50.00", funded__currency="USD")
    place_bets(round_id=round_.pk, bets=[{"key": "u1", "player": player.code, "type": "main", "stake": "10.00",
                                          "record_id": "u1"}])
    close_betting(round_id=round_.pk)
    record = record_for(round_, {"u1": ("main", "10.00", ["stand"], None)}, player_cards=["TH", "6C"])
    record["currency"] = "USD"
    scan(round_.pk, record)
    record_result(round_id=round_.pk, record=record)
    settle_round(round_id=round_.pk)
    assert set(DailyRollup.objects.filter(bet_type="main").values_list("currency_id", "bets")) == {("EUR", 5),
                                                                                                   ("USD", 1)}
    assert_scan_equals_kept()
