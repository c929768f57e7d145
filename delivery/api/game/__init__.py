"""The game-server API (``/api/game/v1/``): thin views over the round, bet and settlement services."""
