"""End to end: the rollups after a random simulated session (delivery.simulator: faults voiding
rounds, misreads resettled, settlement by a real worker on PostgreSQL) with settled rounds then
voided (reversals), adjustments, and two operators in zones half a day apart, equal the full scan
of the bets, their extra stakes and the ledger; and rebuild_rollups finds every day equal."""

import random

import pytest

from accounts.models import Player
from accounts.operators import create_operator
from delivery.simulator.config import SimConfig
from delivery.simulator.runner import run_simulation
from settlement.disputes import manual_adjustment
from settlement.voids import void_round
from tables.models import Round
from tests.conftest import on_postgresql
from tests.rollups_scan import full_scan, kept
from wagering.models import Bet, BetExtra, DailyRollup
from wagering.rollups import rebuild

pytestmark = pytest.mark.django_db(transaction=True)


def test_rollups_equal_the_full_scan_after_a_random_session(request):
    if on_postgresql():
        request.getfixturevalue("celery_workers")("sim", concurrency=2)
    create_operator(code="north", name="North", time_zone="America/Los_Angeles")
    create_operator(code="south", name="South", time_zone="Pacific/Auckland")
    result = run_simulation(SimConfig(rounds=12, players=10, boundless_players=30, seed=19, fault_rate=0.15,
                                      settle_timeout=180), progress=False)
    assert result.settled
    rng = random.Random(19)
    settled = list(Round.objects.filter(pk__in=result.stats.rounds, state=Round.State.SETTLED).order_by("pk"))
    for round_ in rng.sample(settled, 3):
        void_round(round_id=round_.pk, reason="proven dealer error", actor="test")
    players = list(Bet.objects.filter(state=Bet.State.SETTLED, currency_id="EUR",  # each can give 1.25 back
                                      player__wallets__currency="EUR", player__wallets__balance__gte="1.25")
                   .order_by("pk").values_list("player", flat=True).distinct()[:3])
    for n, player in enumerate(Player.objects.filter(pk__in=players).order_by("pk")):
        manual_adjustment(player=player, currency="EUR", amount=("2.50", "-1.25", "4.00")[n], reason="goodwill",
                          actor="test", key=f"e2e-{n}")

    states = set(Round.objects.filter(pk__in=result.stats.rounds).values_list("state", flat=True))
    assert states == {"settled", "voided"} and result.resettled >= 1
    assert BetExtra.objects.exists() and Bet.objects.filter(state=Bet.State.REFUNDED).exists()
    scan = full_scan()
    assert kept() == scan
    assert {operator for _, operator, *_ in scan[0]} == set(Player.objects.filter(
        pk__in=Bet.objects.values("player")).values_list("operator_id", flat=True))
    days = sorted({day for day, *_ in scan[0]})
    assert all(not c.differences for c in rebuild(day_from=days[0], day_to=days[-1], write=False))
    assert DailyRollup.objects.exists()
