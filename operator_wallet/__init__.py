"""The reference operator wallet: the OPERATOR's side of the seamless wallet protocol
(docs/wallet-api.md), as an HTTP server with fault injection, for integrators' sandboxes and the
platform's tests (``python -m operator_wallet --port 8100 --secret S``).

It stands apart from the platform: it imports none of the platform's packages, and none of them
imports it (``tests/test_architecture.py``); the two share only the protocol.

Modules: ``money`` (currencies and amounts), ``protocol`` (signatures, statuses, parsing a call),
``wallet`` (balances, movements, tombstones: the protocol's answers), ``journal`` (the append-only
state file), ``faults`` (what the sandbox breaks, and how often), ``server`` (the HTTP endpoints),
``cli`` (the command line)."""
