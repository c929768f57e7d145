"""The player REST API (``/api/v1/``): a player's own wallets, bets, rounds, ledger and disputes,
read-only except for raising a dispute. Reads come from the apps' selectors (``wagering.selectors``,
``accounts.selectors``, ``settlement.selectors``)."""
