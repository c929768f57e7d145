"""Run every demo table round-robin with a progress bar (a table's misread rounds resettled with
their correct records before it deals on), then wait for the workers to settle."""
from __future__ import annotations

import random
import time
import uuid
from dataclasses import dataclass

from django.conf import settings
from tqdm import tqdm

from settlement.voids import cancel
from tables.models import Round
from wallets import outbox

from .calls import call
from .config import SimConfig
from .demo import ensure_operators, ensure_players, ensure_tables, open_sessions
from .rounds import RunStats, TableGame
from .settling import wait_for_settlement


@dataclass
class SimulationResult:
    """A finished run: ``config``, ``stats`` (``RunStats``), ``tables`` (codes), ``games``
    (``TableGame`` per table code: shoes and players), ``settled`` (every round reached SETTLED
    or VOIDED in time), ``resettled`` (misread rounds corrected), ``delivered`` (every seamless
    credit, rollback and correction of the run acknowledged by its operator's wallet in time),
    ``seconds`` (wall time of the dealing) and ``settle_seconds`` (waiting for settlement and the
    wallets afterwards)."""

    config: SimConfig
    stats: RunStats
    tables: list
    games: dict
    settled: bool
    resettled: int
    delivered: bool
    seconds: float
    settle_seconds: float


def _cancel_leftovers(tables) -> None:
    """Cancel rounds an interrupted earlier run left in play (a table deals one round at a time)."""
    for round_ in Round.objects.filter(table__in=tables, state__in=Round.IN_PLAY, cancelled_at__isnull=True):
        call(cancel, round_id=round_.pk, reason="simulator restarted: round left in play")


def wait_for_wallets(round_ids, timeout: float) -> bool:
    """Poll until the seamless operators' wallets acknowledged every outbox movement of
    ``round_ids`` (True) or ``timeout`` seconds pass (False). Without a broker (tasks in-process,
    no beat) the simulator re-drives the outbox itself while it waits, as beat would."""
    refs, deadline = [str(pk) for pk in round_ids], time.monotonic() + timeout
    while outbox.undelivered(refs):
        if time.monotonic() > deadline:
            return False
        if settings.CELERY_TASK_ALWAYS_EAGER:
            outbox.deliver()
        time.sleep(0.25)
    return True


def run_simulation(config: SimConfig, progress: bool = True) -> SimulationResult:
    """Set up the demo tables, operators and players (each in a session opened by its operator),
    deal ``config.rounds`` rounds at every table (resettling misreads as they settle), wait for
    settlement (up to ``config.settle_timeout`` s), resettle the last misreads and wait for the
    seamless wallets (up to ``config.wallet_timeout`` s). Returns a ``SimulationResult``."""
    rng = random.Random(config.seed)
    tables = ensure_tables(config.variants, config.currencies)
    pool = ensure_players(max(config.players, config.boundless_players), config.currencies, uuid.uuid4().hex[:12],
                          ensure_operators(config.operators, config.wallet_url, config.wallet_secret))
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
    with tqdm(total=config.rounds * len(games), disable=not progress, unit="round", desc="dealing",
              leave=False) as bar:  # erased when done: the report follows
        for _ in range(config.rounds):
            for game in games.values():
                game.play_round()
                bar.update()
    dealt = time.monotonic()
    settled = wait_for_settlement(stats.rounds, config.settle_timeout)
    if settled:
        for game in games.values():
            game.correct_misreads(0)
    delivered = wait_for_wallets(stats.rounds, config.wallet_timeout)
    return SimulationResult(config, stats, [t.code for t in tables], games, settled, stats.resettled, delivered,
                            dealt - start, time.monotonic() - dealt)
