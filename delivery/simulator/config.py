"""The simulator's knobs."""
from __future__ import annotations

from dataclasses import dataclass

VARIANTS = ("classic", "premium", "boundless")
CURRENCIES = ("EUR", "USD", "FUN")


@dataclass(frozen=True)
class SimConfig:
    """What to simulate.

    Args:
      rounds: rounds dealt at each table.
      players: demo players around each classic/premium table (7 seats; the rest bet behind).
      boundless_players: players at each boundless table (thousands are fine).
      variants: variants to run (one demo table per variant and currency).
      currencies: table currencies: ``EUR``/``USD`` (real money; real and trial accounts) and
        ``FUN`` (play-for-fun; its players are refused seats and bet behind or play boundless).
      seed: seed of every random choice (shuffles included); None = a random run.
      fault_rate: share of rounds hit by a fault (suspend+resume, cancel+void, card misread then
        resettled, duplicate settle delivery), 0..1.
      drift_rounds: the first N rounds of every table are dealt from a dealer-favouring shoe
        (every ace stacked behind the cut card); records stay valid, the RTP drops measurably.
      deviate / timeout: share of decisions that deviate from basic strategy / time out (auto-play).
      settle_timeout: seconds to wait for the workers to settle everything before reporting.
      operators: codes of the operators whose players are dealt (the transfer-mode demo operators
        by default; ``east``, the seamless one, needs its wallet).
      wallet_url / wallet_secret: where the seamless demo operator's wallet answers and the secret
        its calls are signed with (``make wallet-sandbox``'s by default).
      wallet_timeout: seconds to wait, after settlement, for the seamless operators' wallets to
        acknowledge every credit, rollback and correction of the run.
    """

    rounds: int = 30
    players: int = 12
    boundless_players: int = 200
    variants: tuple = VARIANTS
    currencies: tuple = CURRENCIES
    seed: int | None = None
    fault_rate: float = 0.05
    drift_rounds: int = 0
    deviate: float = 0.05
    timeout: float = 0.03
    settle_timeout: float = 300.0
    operators: tuple = ("north", "south")
    wallet_url: str = "http://127.0.0.1:8100"
    wallet_secret: str = "sandbox-secret"
    wallet_timeout: float = 120.0

    def __post_init__(self):
        unknown = set(self.variants) - set(VARIANTS) or set(self.currencies) - set(CURRENCIES)
        if unknown:
            raise ValueError(f"unknown variant or currency: {sorted(unknown)}")
        if not self.operators:
            raise ValueError("at least one operator")
        if not 0 <= self.fault_rate <= 1 or self.rounds < 0 or self.players < 1 or self.boundless_players < 1:
            raise ValueError("rounds >= 0, players >= 1, boundless_players >= 1, 0 <= fault_rate <= 1")
