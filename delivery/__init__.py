"""The delivery floor: everything that carries the platform to people and programs outside it,
above the domain services it calls and never imported by them (docs/architecture.md).

- ``api``:        the game-server API (``api.game``) and the player API (``api.player``);
- ``backoffice``: the operator site's shared pieces (base admin classes, action views, roles,
                  the round replay, money as shown);
- ``simulator``:  the table simulator (a stand-in studio game server) and the demo set-up.

Each app's ``admin.py`` and ``management/commands`` belong to this floor too (Django keeps them
in their apps).
"""
