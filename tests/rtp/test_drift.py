"""The RTP watch on rounds played through the real services (``open_round``, ``place_bets``,
``close_betting``, ``record_result``, settlement's ``settle_round``), dealt by the engine's
``RoundPlay``, checked against the exact theoretical report of the table's rules.

Why not the issue's "dealer hits soft 17" fault: the engine checks the dealer's draws (S17), so
such a record is refused (SETTLEMENT_FAILED) and nothing is paid; it cannot drift the settled RTP.
Why not the simulator's drift mode (every ace stacked behind the cut card): valid records, but the
RTP drops only ~2.5 points, and seven hands against one dealer are strongly correlated, so a
4-standard-error signal needs tens of thousands of hands. Here the drift is a dealer who deals
every other round from a stacked order (each seat T+6, dealer T up and 7 in the hole, then
ten-values: the players hit their 16s and bust): valid records, RTP about 50%. Every round holds
the cards scanned, and no shoe more than 8 of a card (RULES 1): a stacked round comes from a
stacked shoe of its own (a new shoe number, finished with that round), and the house shoe is
shuffled again when it comes back (a shoe number never goes backwards).

Decisions are basic strategy without doubles and splits (no extra stakes to take), insurance
never; that plays a point or two below the optimal figure, well inside the honest run's noise.
"""
import random
from itertools import cycle

import pytest

from settlement import rtp_watch
from settlement.models import Alert
from settlement.results import record_result
from settlement.services import settle_round
from tables.engine import Shoe
from tables.engine.play import RoundPlay
from tables.engine.strategy import basic_strategy
from tests.factories import PlayerFactory, PremiumTableFactory, RoundFactory, scan
from wagering.closing import close_betting
from wagering.placement import place_bets

pytestmark = pytest.mark.django_db

ROUNDS = 120
SEATS = 7
TENS = cycle([r + s for r in "TJQK" for s in "SHDC"])
SIXES = cycle(["6S", "6H", "6D", "6C"])


class StackedDeal:
    """The draws of one stacked premium round with ``SEATS`` seats: T,... (first cards), T (dealer
    up), 6,... (second cards), 7 (hole: 17, no blackjack), then ten-values."""

    def __init__(self):
        self.cards = [next(TENS) for _ in range(SEATS + 1)] + [next(SIXES) for _ in range(SEATS)] + ["7D"]

    def draw(self):
        return self.cards.pop(0) if self.cards else next(TENS)


def _decide(view, legal):
    return basic_strategy(view.cards, view.dealer_up, legal - {"double", "split"})


def _play(rounds: int, *, drift: bool, seed: int):
    """Play ``rounds`` premium rounds of ``SEATS`` 10.00 main bets; with ``drift`` every other round
    is stacked (``StackedDeal``, from a shoe of its own), the others come from a seeded shoe.
    Returns the table."""
    table = PremiumTableFactory()
    players = [PlayerFactory(funded="100000.00") for _ in range(SEATS)]
    rng = random.Random(seed)
    shoe = Shoe(rng=rng, penetration=0.75)
    number, dealing = 0, None  # the table's shoe number; the house shoe's shuffle it stands for
    for i in range(rounds):
        stacked = drift and i % 2 == 0
        if stacked or dealing != shoe.shuffles:
            number += 1
            dealing = None if stacked else shoe.shuffles
        if stacked and shoe.shoe_round:
            shoe.shuffle()  # the house shoe, put aside for the stacked one, is shuffled again
        round_ = RoundFactory(table=table, shoe=number)
        place_bets(round_id=round_.pk, bets=[
            {"key": f"{round_.pk}:{n}", "player": p.code, "type": "main", "seat": n, "stake": "10.00",
             "record_id": f"b{n}"} for n, p in enumerate(players, 1)])
        close_betting(round_id=round_.pk)
        bets = [{"id": f"b{n}", "player": p.code, "type": "main", "seat": n, "stake": "10.00", "insurance": False}
                for n, p in enumerate(players, 1)]
        source = StackedDeal() if stacked else shoe
        if not stacked:
            shoe.begin_round()
        record = RoundPlay(table.rules(), source, bets, decide=_decide, round_id=round_.external_id,
                           shoe_round=round_.shoe_round).play()
        cut = stacked or shoe.cut_card_out  # a stacked shoe goes with its one round
        scan(round_.pk, record)
        record_result(round_id=round_.pk, record=record, cut_card_out=cut)
        if not stacked:
            shoe.end_round()
        settle_round(round_id=round_.pk)
    return table


@pytest.fixture(autouse=True)
def watch_settings(settings):
    settings.RTP_WATCH_Z, settings.RTP_WATCH_MIN_BETS = 4, 300


def test_stacked_dealing_raises_an_alert():
    table = _play(ROUNDS, drift=True, seed=7)
    day = next(d for d in rtp_watch.check_table(table) if (d.bet_type, d.window) == ("main", "day"))
    print(f"\nstacked: observed {100 * day.stats.rtp:.2f}% +/- {100 * day.stats.se:.2f}%, z {day.z:+.1f}")
    assert day.stats.bets == ROUNDS * SEATS and day.alert and day.z < -6, day
    alerts = rtp_watch.watch()
    assert {(a.payload["bet_type"], a.payload["window"]) for a in alerts} >= {("main", "hour"), ("main", "day")}
    alert = Alert.objects.get(kind="rtp_deviation", table=table, payload__bet_type="main", payload__window="day")
    assert alert.payload["observed"] < 0.7 and alert.payload["z"] < -6
    assert alert.payload["expected"] == pytest.approx(0.99517, abs=1e-4)
    assert rtp_watch.watch() and Alert.objects.filter(kind="rtp_deviation", table=table).count() == len(alerts)


def test_honest_dealing_raises_none():
    table = _play(ROUNDS, drift=False, seed=7)
    checks = rtp_watch.check_table(table)
    day = next(d for d in checks if (d.bet_type, d.window) == ("main", "day"))
    print(f"\nhonest: observed {100 * day.stats.rtp:.2f}% +/- {100 * day.stats.se:.2f}%, z {day.z:+.1f}")
    assert day.stats.bets == ROUNDS * SEATS and abs(day.z) < 3, day
    assert not any(d.alert for d in checks) and rtp_watch.watch() == []
    assert not Alert.objects.filter(kind="rtp_deviation").exists()
