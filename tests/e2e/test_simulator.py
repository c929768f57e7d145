"""End to end: the table simulator against the platform, on PostgreSQL with a real Redis broker and
a real Celery worker, and on SQLite with settlement in-process (what ``make run`` does). One run of
300+ rounds across the three variants with faults switched on, then the platform's invariants; and
the simulator's shoes as persisted (RULES 1)."""

from collections import Counter
from decimal import Decimal

import pytest
from django.db.models import Sum

from delivery.simulator.config import SimConfig
from delivery.simulator.report import build_report, ratio_ci
from delivery.simulator.runner import run_simulation
from tables.engine import card_value
from tables.models import Round, RoundEvent, Shoe
from tests.conftest import on_postgresql
from wagering.models import Bet, BetExtra

pytestmark = pytest.mark.django_db(transaction=True)


def _tables(result):
    return {code: game.table for code, game in result.games.items()}


@pytest.fixture
def run(request):
    """A fresh simulation (with a real worker on PostgreSQL): ``run(**SimConfig fields) -> SimulationResult``."""
    if on_postgresql():
        request.getfixturevalue("celery_workers")("sim", concurrency=2)

    def simulate(**config):
        return run_simulation(SimConfig(settle_timeout=180, **config), progress=False)
    return simulate


def test_three_hundred_rounds_with_faults_settle_refund_and_reconcile(run):
    result = run(rounds=38, players=12, boundless_players=50, seed=8, fault_rate=0.12)
    rounds = result.stats.rounds
    assert len(rounds) == 38 * 8 and result.settled
    assert {t.variant for t in _tables(result).values()} == {"classic", "premium", "boundless"}

    assert set(Round.objects.filter(pk__in=rounds).values_list("state", flat=True)) <= {"settled", "voided"}
    states = Counter(Bet.objects.filter(round__in=rounds).values_list("state", flat=True))
    assert set(states) == {"settled", "refunded"} and states["settled"] > 5000

    report = build_report(rounds, _tables(result))
    assert report.reconcile.ok, report.reconcile.breaches
    assert set(report.house_vs_players) == {"EUR", "USD", "FUN"}
    for currency, (house, players) in report.house_vs_players.items():
        assert house == -players, currency
    assert {ln.variant for ln in report.rtp if ln.group == "main game"} == {"classic", "premium", "boundless"}

    faults = result.stats.faults
    assert set(faults) == {"suspend", "cancel", "misread", "duplicate"}
    assert result.resettled == len(result.stats.misreads) > 0
    assert {kind for _, _, kind, _ in result.stats.refusals} == {"trial", "fun"}
    assert result.stats.decisions.extras.keys() >= {"double", "split", "insurance", "follow_double"}


def test_voided_round_timeline_shows_every_refund(run):
    result = run(rounds=12, players=10, boundless_players=20, variants=("classic", "premium"), currencies=("EUR",),
                 seed=5, fault_rate=0.5)
    voided = Round.objects.filter(pk__in=result.stats.faults["cancel"], state="voided")
    assert voided.exists()
    for round_ in voided:
        kinds = list(round_.events.values_list("kind", flat=True))
        assert kinds.index("suspended") < kinds.index("cancelled") < kinds.index("voided")
        bets = Bet.objects.filter(round=round_)
        assert set(bets.values_list("state", flat=True)) <= {"refunded"}
        refunds = round_.events.filter(kind=RoundEvent.Kind.BET_REFUNDED)
        assert sorted(e.payload["bet"] for e in refunds) == sorted(bets.values_list("pk", flat=True))
        staked = (bets.aggregate(s=Sum("stake"))["s"] or 0) + \
            (BetExtra.objects.filter(bet__round=round_).aggregate(s=Sum("amount"))["s"] or 0)
        assert sum(Decimal(e.payload["refunded"]) for e in refunds) == staked
    for pk in result.stats.faults.get("misread", []):
        round_ = Round.objects.get(pk=pk)
        assert round_.state == "settled" and round_.corrections.count() == 1
        assert round_.events.filter(kind="resettled").count() == 1
    for pk in result.stats.faults.get("duplicate", []):
        assert Round.objects.get(pk=pk).events.filter(kind="settled").count() == 1


def _cards(record):
    seats = record.get("seats", {}).values()
    return record["dealer"] + record.get("player_cards", []) + [c for s in seats for c in s["cards"]]


def test_simulator_shoe_as_persisted(run):
    """RULES 1: 416 cards, each at most 8 times; the shown card's value burned; the round in which
    the cut card comes out is the last of its shoe, then a new shoe (shoe rounds from 1)."""
    result = run(rounds=45, players=12, variants=("classic",), currencies=("EUR",), seed=11, fault_rate=0)
    game = result.games["CLASSIC-1"]
    table = game.table
    cut = int(416 * table.penetration / 100)
    logs = {log.sequence: log for log in game.shoe.logs if log.rounds}
    assert len(logs) >= 2
    shoes = {s.sequence: s for s in Shoe.objects.filter(table=table)}
    assert set(shoes) == set(logs)
    for sequence, log in logs.items():
        assert len(log.order) == 416 and set(Counter(log.order).values()) == {8} and len(set(log.order)) == 52
        burn = 1 + card_value(log.shown)
        assert log.order[:burn] == log.burned and shoes[sequence].burn_count == burn
        assert log.cut_position == cut
        rounds = list(Round.objects.filter(shoe=shoes[sequence]).order_by("shoe_round"))
        assert [r.shoe_round for r in rounds] == list(range(1, len(rounds) + 1))
        assert [r.pk for r in rounds] == log.rounds
        dealt = burn
        for i, round_ in enumerate(rounds):
            cards = _cards(round_.record)
            # the round's cards are the next ones out of this shoe
            assert Counter(cards) == Counter(log.order[dealt:dealt + len(cards)])
            before, dealt = dealt, dealt + len(cards)
            last = i == len(rounds) - 1
            assert (before < cut <= dealt) if last and shoes[sequence].cut_card_out else dealt < cut
        assert max(Counter(c for r in rounds for c in _cards(r.record)).values()) <= 8
    finished = [s for s in sorted(logs) if shoes[s].cut_card_out]
    assert finished and all(s + 1 in shoes for s in finished)


def test_rtp_interval_of_a_rare_side_bet_never_goes_below_zero():
    """One round in 40 pays 30:1 (a rare side bet): the normal approximation's lower end would be
    negative; no bet returns less than nothing."""
    pairs = [(Decimal(1), Decimal(31) if i == 0 else Decimal(0)) for i in range(40)]
    rtp, low, high = ratio_ci(pairs)
    assert rtp == pytest.approx(31 / 40) and low == 0.0 and high > rtp


def test_the_simulator_insures_before_it_scans_the_hole_card(run):
    """RULES 3, 4: at the tables with a hole card, insurance is asked on the ace up card before the
    hole card is scanned (the platform refuses it after), and the other extras after the peek."""
    result = run(rounds=30, players=12, boundless_players=30, variants=("premium", "boundless"), currencies=("EUR",),
                 seed=4, fault_rate=0)
    assert result.settled and result.stats.decisions.extras.get("insurance")
    for round_ in Round.objects.filter(pk__in=result.stats.rounds):
        timeline = list(round_.events.order_by("pk").values_list("kind", "payload"))
        scans = [i for i, (kind, payload) in enumerate(timeline)
                 if kind == "card_scanned" and payload["to"] == "dealer"]
        extras = [(i, payload["kind"]) for i, (kind, payload) in enumerate(timeline) if kind == "extra_stake"]
        assert all(i < scans[1] if kind == "insurance" else i > scans[1] for i, kind in extras), round_.pk


def test_simulator_batches_the_extra_stakes_of_a_decision(run, monkeypatch):
    """A studio sends the extra stakes decided together in one call: at the shared hand every
    player's doubles and splits on the same cards, at a seat its double or split with the bets
    behind that follow it (docs/game-server-api.md), not one call per extra stake."""
    from delivery.simulator import decisions
    calls = Counter()
    taken = decisions.add_extra_stakes

    def counted(*, round_id, extras, actor=""):
        calls[round_id] += 1
        return taken(round_id=round_id, extras=extras, actor=actor)
    monkeypatch.setattr(decisions, "add_extra_stakes", counted)
    result = run(rounds=12, players=30, boundless_players=300, variants=("premium", "boundless"), currencies=("EUR",),
                 seed=3, fault_rate=0)
    extras = Counter(BetExtra.objects.filter(bet__round__in=result.stats.rounds).values_list("bet__round", flat=True))
    boundless = Round.objects.filter(pk__in=result.stats.rounds, table__variant="boundless")
    assert sum(extras[r.pk] for r in boundless) > 100
    for round_ in boundless:  # insurance, then at most one batch per card of the shared hand
        assert calls[round_.pk] <= len(round_.record["player_cards"]) - 1
    premium = Round.objects.filter(pk__in=result.stats.rounds, table__variant="premium")
    assert BetExtra.objects.filter(bet__round__in=premium, kind__startswith="follow_").exists()
    kinds = (RoundEvent.Kind.EXTRA_STAKE, RoundEvent.Kind.FALLBACK)
    asked = RoundEvent.objects.filter(round__in=premium, kind__in=kinds, payload__kind__in=("double", "split")).count()
    insured = premium.filter(bets__extras__kind="insurance").distinct().count()
    assert sum(calls[r.pk] for r in premium) <= asked + insured  # a seat's double or split and its follows: one call
