"""The reference operator wallet: the OPERATOR's side of the seamless wallet protocol
(docs/wallet-api.md), for integrators' sandboxes and the platform's tests.

It stands apart from the platform: it imports none of the platform's packages; the two share
only the protocol.

Modules: ``money`` (currencies and amounts), ``protocol`` (signatures, statuses, parsing a call),
``wallet`` (balances, movements, tombstones: the protocol's answers), ``journal`` (the append-only
state file), ``faults`` (what the sandbox breaks, and how often)."""
