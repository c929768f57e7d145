"""Run every demo table round-robin with a progress bar, wait for the workers to settle, then
resettle the misread rounds with their correct records."""
from __future__ import annotations

import random
import time
import uuid
from dataclasses import dataclass

from django.db.models import Q
from tqdm import tqdm

from settlement.services import resettle_round
from settlement.voids import cancel
from tables.models import Round

from .calls import call
from .config import SimConfig
from .demo import ensure_operators, ensure_players, ensure_tables, open_sessions
from .rounds import RunStats, TableGame

OPERATOR = "operator:simulator"


@dataclass
class SimulationResult:
    """A finished run: ``config``, ``stats`` (``RunStats``), ``tables`` (codes), ``games``
    (``TableGame`` per table code: shoes and players), ``settled`` (every round reached SETTLED
    or VOIDED in time), ``resettled`` (misread rounds corrected), ``seconds`` (wall time of the
    dealing) and ``settle_seconds`` (waiting for settlement afterwards)."""

    config: SimConfig
    stats: RunStats
    tables: list
    games: dict
    settled: bool
    resettled: int
    seconds: float
    settle_seconds: float


def _cancel_leftovers(tables) -> None:
    """Cancel rounds an interrupted earlier run left in play (a table deals one round at a time)."""
    for round_ in Round.objects.filter(table__in=tables, state__in=Round.IN_PLAY, cancelled_at__isnull=True):
        call(cancel, round_id=round_.pk, reason="simulator restarted: round left in play")


def pending(round_ids) -> int:
    """How many of ``round_ids`` are still waiting for settlement (RESULTED, or cancelled and not
    yet voided)."""
    return Round.objects.filter(pk__in=round_ids).filter(
        Q(state=Round.State.RESULTED) | Q(cancelled_at__isnull=False) & ~Q(state=Round.State.VOIDED)).count()


def wait_for_settlement(round_ids, timeout: float) -> bool:
    """Poll until none of ``round_ids`` is pending (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while pending(round_ids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.25)
    return True


def _resettle(misreads) -> int:
    """Resettle each misread round that was settled with its correct record; returns how many."""
    done = 0
    settled = set(Round.objects.filter(pk__in=[pk for pk, _ in misreads], state=Round.State.SETTLED)
                  .values_list("pk", flat=True))
    for pk, record in misreads:
        if pk in settled:
            resettle_round(round_id=pk, corrected_record=record, actor=OPERATOR,
                           reason="card misread by the scanner; rescanned, corrected record")
            done += 1
    return done


def run_simulation(config: SimConfig, progress: bool = True) -> SimulationResult:
    """Set up the demo tables, operators and players (each in a session opened by its operator),
    deal ``config.rounds`` rounds at every table, wait for
    settlement (up to ``config.settle_timeout`` s), resettle misreads. Returns a ``SimulationResult``."""
    rng = random.Random(config.seed)
    tables = ensure_tables(config.variants, config.currencies)
    pool = ensure_players(max(config.players, config.boundless_players), config.currencies, uuid.uuid4().hex[:12],
                          ensure_operators(config.operators))
    open_sessions(pool)
    _cancel_leftovers(tables)
    stats = RunStats()
    games = {}
    for table in tables:
        table_rng = random.Random(rng.getrandbits(64))
        everyone = pool[table.currency_id]
        size = config.boundless_players if table.seats is None else config.players
        players = table_rng.sample(everyone, min(size, len(everyone)))
        games[table.code] = TableGame(table, players, config, table_rng, stats,
                                      Round.objects.filter(table=table).count())
    start = time.monotonic()
    with tqdm(total=config.rounds * len(games), disable=not progress, unit="round", desc="dealing") as bar:
        for _ in range(config.rounds):
            for game in games.values():
                game.play_round()
                bar.update()
    dealt = time.monotonic()
    settled = wait_for_settlement(stats.rounds, config.settle_timeout)
    resettled = _resettle(stats.misreads) if settled else 0
    return SimulationResult(config, stats, [t.code for t in tables], games, settled, resettled,
                            dealt - start, time.monotonic() - dealt)
