"""The delivery floor: what carries the platform to programs and people outside it, above the
domain services it calls and never imported by them (docs/architecture.md).

- ``api``:       the game-server API (``api.game``) and the player API (``api.player``);
- ``simulator``: the table simulator (a stand-in studio game server) and the demo set-up.

The operator site is not on this floor: each app's ``admin.py`` and management commands stand on
their app's floor, on the toolkit ``adminkit``; ``settlement.admin`` completes the pages with what
only settlement knows, and the operator action views are ``settlement.actions``.
"""
