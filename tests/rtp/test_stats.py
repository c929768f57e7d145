"""The RTP watch's statistics (settlement.rtp_watch) on synthetic settled bets: the ratio
estimator and its round-clustered standard error, the return on the original stake (extras and
insurance taken out), the windows, and the alerts (threshold, minimum bets, idempotence)."""

import math
import random
import statistics
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from settlement import rtp_watch
from settlement.models import Alert, SettlementDetail
from tables.models import Round, TheoreticalRtp
from tables.rtp import rules_key
from tests.factories import PlayerFactory, PremiumTableFactory, RoundFactory
from wagering.models import Bet

D = Decimal


def test_ratio_stats_by_hand():
    # three rounds of one 10.00 bet: back 20, 0, 10 -> RTP 1; residuals 10, -10, 0
    s = rtp_watch.ratio_stats([(1, D(10), D(20)), (1, D(10), D(0)), (1, D(10), D(10))])
    assert (s.bets, s.rounds, s.staked, s.returned, s.rtp) == (3, 3, D(30), D(30), 1.0)
    assert s.se == pytest.approx(math.sqrt(3 / 2 * 200) / 30)
    assert s.z(0.9) == pytest.approx(0.1 / s.se)
    one = rtp_watch.ratio_stats([(2, D(5), D(4))])
    assert one.rtp == 0.8 and math.isnan(one.se) and one.bets == 2
    assert rtp_watch.ratio_stats([]) is None


def test_ratio_standard_error_matches_the_spread_of_the_estimate():
    """Delta-method SE vs the empirical SD of the RTP over many samples of unequal stakes."""
    rng = random.Random(3)

    def sample(n=300):
        rows = []
        for _ in range(n):
            stake = D(rng.choice([1, 2, 5, 25]))
            mult = rng.choices([0, 1, 2, D("2.5")], weights=[47, 8, 42, 3])[0]
            rows.append((1, stake, stake * mult))
        return rtp_watch.ratio_stats(rows)

    runs = [sample() for _ in range(400)]
    spread = statistics.pstdev(r.rtp for r in runs)
    mean_se = statistics.fmean(r.se for r in runs)
    assert mean_se == pytest.approx(spread, rel=0.12)


# --- synthetic rows in the database ---------------------------------------------------------------

def _settled_round(table, *, ago, shoe=1):
    round_ = RoundFactory(table=table, shoe=shoe)
    Round.objects.filter(pk=round_.pk).update(state=Round.State.SETTLED, settled_at=timezone.now() - ago)
    return round_


def _bet(round_, player, bet_type, stake, returned, *, staked=None, insurance=None):
    """A SETTLED bet with its settlement detail: ``staked`` = every stake held (default ``stake``);
    ``insurance`` = (stake, returned) strings."""
    bet = Bet.objects.create(round=round_, player=player, type=bet_type, stake=D(stake), state=Bet.State.SETTLED,
                             returned=D(returned), idempotency_key=f"k{Bet.objects.count()}-{round_.pk}",
                             record_id=f"b{Bet.objects.filter(round=round_).count()}", settled_at=timezone.now())
    detail = {"staked": staked or stake, "returned": returned}
    if bet_type in ("main", "behind"):
        detail["insurance"] = {"stake": insurance[0], "returned": insurance[1]} if insurance else None
    bet.settlement = SettlementDetail.objects.create(round=round_, detail=detail)
    bet.save(update_fields=["settlement"])
    return bet


@pytest.fixture
def table():
    return PremiumTableFactory()


@pytest.fixture
def player():
    return PlayerFactory()


@pytest.mark.django_db
def test_return_on_original_stake_takes_extras_and_insurance_out(table, player):
    r = _settled_round(table, ago=timedelta(minutes=5))
    # 10 + double 10 + insurance 5 held; the doubled hand wins (40 back), insurance lost
    _bet(r, player, "main", "10.00", "40.00", staked="25.00", insurance=("5.00", "0.00"))
    # 10 + insurance 5; dealer blackjack: hand lost, insurance returns 15
    _bet(r, player, "main", "10.00", "15.00", staked="15.00", insurance=("5.00", "15.00"))
    _bet(r, player, "pairs", "2.00", "12.00")
    seen = rtp_watch.observed(table)
    main = seen[("main", "hour")]
    assert (main.bets, main.rounds, main.staked, main.returned) == (2, 1, D(20), D(30))  # 30 + 0
    assert seen[("pairs", "hour")].rtp == 6.0


@pytest.mark.django_db
def test_windows_hour_day_and_current_shoe(table, player):
    # in dealing order (a table's shoe number never goes backwards): shoe 1, then the current shoe 2
    _bet(_settled_round(table, ago=timedelta(days=4), shoe=1), player, "main", "10", "25")  # nowhere
    _bet(_settled_round(table, ago=timedelta(days=3), shoe=2), player, "main", "10", "10")  # old, current shoe
    _bet(_settled_round(table, ago=timedelta(hours=3), shoe=2), player, "main", "10", "0")
    _bet(_settled_round(table, ago=timedelta(minutes=10), shoe=2), player, "main", "10", "20")
    seen = rtp_watch.observed(table)
    assert (seen[("main", "hour")].bets, seen[("main", "day")].bets, seen[("main", "shoe")].bets) == (1, 2, 3)
    assert seen[("main", "day")].rtp == 1.0 and seen[("main", "shoe")].rtp == 1.0


@pytest.mark.django_db
def test_unsettled_and_refunded_bets_do_not_count(table, player):
    r = _settled_round(table, ago=timedelta(minutes=1))
    _bet(r, player, "main", "10", "20")
    Bet.objects.create(round=r, player=player, type="main", stake=D(10), state=Bet.State.REFUNDED,
                       idempotency_key="refunded", record_id="refunded")
    resulted = RoundFactory(table=table)
    _bet(resulted, player, "main", "10", "0")
    Round.objects.filter(pk=resulted.pk).update(state=Round.State.RESULTED)
    assert rtp_watch.observed(table)[("main", "hour")].bets == 1


def _expect(table, main_rtp, side=None):
    """Store a theoretical report for ``table`` (the exact one is tested elsewhere)."""
    TheoreticalRtp.objects.create(key=rules_key(table.rules()), variant=table.variant, report={
        "main": {"rtp": main_rtp}, "side_bets": {k: {"rtp": v} for k, v in (side or {}).items()}})


@pytest.mark.django_db
def test_alert_threshold_minimum_bets_and_idempotence(table, player, settings):
    settings.RTP_WATCH_Z, settings.RTP_WATCH_MIN_BETS = 4, 30
    _expect(table, 0.995, {"pairs": 0.95})
    rng = random.Random(1)
    for _ in range(50):  # players lose far too often: ~25% back
        r = _settled_round(table, ago=timedelta(minutes=20))
        for _ in range(2):
            _bet(r, player, "main", "10", rng.choice(["0"] * 7 + ["20"]))
        _bet(r, player, "pairs", "1", "0")  # always lost: RTP 0 with se 0
    checks = {(d.bet_type, d.window): d for d in rtp_watch.check_table(table)}
    main = checks[("main", "hour")]
    assert main.alert and main.z < -4 and main.stats.bets == 100
    assert checks[("pairs", "hour")].alert  # constant loss: z = -inf

    alerts = rtp_watch.watch()
    assert len(alerts) == 6  # main and pairs x hour, day, shoe
    alert = Alert.objects.get(kind="rtp_deviation", payload__bet_type="main", payload__window="hour")
    assert alert.table == table and alert.payload["expected"] == 0.995
    assert alert.payload["observed"] == pytest.approx(main.stats.rtp) and alert.payload["z"] == pytest.approx(main.z)
    assert "observed RTP" in alert.message and "99.50%" in alert.message

    rtp_watch.watch()  # same deviation: updated, not repeated
    assert Alert.objects.filter(kind="rtp_deviation").count() == 6
    Alert.objects.filter(pk=alert.pk).update(acknowledged_at=timezone.now())
    rtp_watch.watch()  # acknowledged: the next run opens a new one for that window
    assert Alert.objects.filter(kind="rtp_deviation", payload__bet_type="main", payload__window="hour").count() == 2

    settings.RTP_WATCH_MIN_BETS = 101
    assert not any(d.alert for d in rtp_watch.check_table(table) if d.bet_type == "main")


@pytest.mark.django_db
def test_no_alert_within_the_threshold(table, player, settings):
    settings.RTP_WATCH_MIN_BETS = 10
    _expect(table, 1.0)
    for back in ["0", "20"] * 10:
        _bet(_settled_round(table, ago=timedelta(minutes=3)), player, "main", "10", back)
    checks = rtp_watch.check_table(table)
    assert checks and all(d.z == 0 and not d.alert for d in checks)
    assert rtp_watch.watch() == [] and not Alert.objects.exists()
