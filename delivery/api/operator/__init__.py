"""The operator API (``/api/operator/v1/``), server to server: an operator (a casino brand) creates
and updates its players, mints their player API sessions, moves money in and out of their wallets
(transfer mode), and reads its players' bets, rounds and ledger statement. Each key acts on its own
operator's players and data only; every call is audited (``OperatorAPICall``)."""
