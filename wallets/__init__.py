"""The wallet port: the one way wagering and settlement move a player's money (docs/architecture.md).

Two adapters behind it, chosen by the player's operator: ``transfer`` (the platform's own wallets:
the ledger, ``accounts.services.post``) and ``seamless`` (the operator keeps the money: every
stake is a synchronous debit of its wallet, every credit, rollback and correction leaves through
a transactional outbox, docs/wallet-api.md). The ledger records every movement for both.
"""
