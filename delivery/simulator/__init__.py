"""The table simulator: a stand-in game server that deals real shoes at demo tables and
drives the platform through the same services a studio would (``tables``, ``wagering``,
``settlement``), never writing bets, rounds or ledger rows itself.

Modules, one job each:

- ``config``:    ``SimConfig``, the knobs (rounds, players, seed, faults, drift).
- ``calls``:     service calls as a studio makes them (resent after a lost deadlock).
- ``demo``:      idempotent demo currencies, tables with limits, players with deposits.
- ``shoes``:     a table's live shoe, its persisted sequence number and the drift (stacked) shuffle.
- ``betting``:   who sits, who bets behind, stakes within limits, side bets offered this shoe round.
- ``decisions``: decisions (basic strategy, deviations, timeouts) and extra stakes at decision time.
- ``faults``:    suspend/resume, cancel (void), misread + resettle, duplicate settle deliveries.
- ``rounds``:    one round from open to record.
- ``runner``:    every table round-robin with a progress bar, then waits for settlement.
- ``report``:    per-variant RTP with 95% confidence intervals, voids, refunds, reconcile.

``runner.run_simulation(config, progress=True) -> SimulationResult`` is the entry point
(``python manage.py run_tables``; ``python manage.py create_demo_users`` sets up the demo logins).
"""
