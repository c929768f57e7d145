"""What the sandbox breaks, and how often (docs/wallet-api.md, "The reference wallet").

``Faults`` is the configuration: the same names on the command line (``--timeout-rate 0.1``) and
in ``POST /_admin/faults`` (``{"timeout_rate": 0.1}``). ``Injector`` draws them, call by call,
from a random generator seeded by ``seed`` (the same seed and the same sequence of calls give the
same faults), and counts each fault it injects."""

import asyncio
import dataclasses
import random

from operator_wallet.protocol import INSUFFICIENT_FUNDS, LIMIT_EXCEEDED, PLAYER_BLOCKED


def _fault(default, help):
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass(frozen=True)
class Faults:
    """The faults of the money calls (debit, credit, rollback; ``down`` refuses balance too), each
    field's ``metadata["help"]`` saying what it does. Rates are probabilities 0..1 drawn per call,
    durations milliseconds (integers >= 0)."""

    down: bool = _fault(False, "answer every protocol call HTTP 503, nothing applied (an outage)")
    latency_ms: int = _fault(0, "delay every call by this many milliseconds...")
    jitter_ms: int = _fault(0, "...plus a random 0..this many")
    error_before_rate: float = _fault(0.0, "share of calls answered HTTP 503, not applied")
    drop_rate: float = _fault(0.0, "share of calls whose connection is closed without an answer")
    drop_applies: bool = _fault(False, "a dropped call is applied before its connection is closed")
    late_debit_rate: float = _fault(0.0, "share of debits held LATE_DEBIT_MS before they are applied")
    late_debit_ms: int = _fault(5000, "how long a late debit is held")
    timeout_rate: float = _fault(0.0, "share of calls applied, then answered only after TIMEOUT_MS")
    timeout_ms: int = _fault(10000, "how long a timed-out call's answer is held")
    error_after_rate: float = _fault(0.0, "share of calls applied, then answered HTTP 500")
    insufficient_rate: float = _fault(0.0, "share of debits refused INSUFFICIENT_FUNDS whatever the balance")
    blocked_players: tuple = _fault((), "players whose debits are refused PLAYER_BLOCKED")
    limit_players: tuple = _fault((), "players whose debits are refused LIMIT_EXCEEDED")
    seed: int | None = _fault(None, "seed of the faults' random draws (default: unseeded)")

    def updated(self, changes):
        """A copy with ``changes`` (a mapping of field names to JSON values) applied. Raises
        ``ValueError`` naming the first unknown field or value of the wrong type or range."""
        if not isinstance(changes, dict):
            raise ValueError("faults must be a JSON object")
        fields = {f.name: f for f in dataclasses.fields(self)}
        values = {}
        for name, value in changes.items():
            if name not in fields:
                raise ValueError(f"unknown fault {name!r}")
            values[name] = _checked(name, fields[name].default, value)
        return dataclasses.replace(self, **values)

    def as_json(self):
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in dataclasses.asdict(self).items()}


def _checked(name, default, value):
    """``value`` for the field ``name`` (whose default is ``default``), or ``ValueError``."""
    if isinstance(default, bool):
        ok, expected = isinstance(value, bool), "true or false"
    elif name.endswith("_rate"):
        ok, expected = _number(value) and 0 <= value <= 1, "a rate 0..1"
    elif name.endswith("_ms"):
        ok, expected = _integer(value) and value >= 0, "milliseconds (an integer >= 0)"
    elif isinstance(default, tuple):
        ok, expected = isinstance(value, list | tuple) and all(isinstance(v, str) and v for v in value), \
            "a list of player codes"
        value = tuple(value) if ok else value
    else:
        ok, expected = value is None or _integer(value), "an integer or null"
    if not ok:
        raise ValueError(f"{name}: {value!r} is not {expected}")
    return value


def _integer(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value):
    return _integer(value) or isinstance(value, float)


class Injector:
    """Draws the ``Faults`` in force (``faults``) and counts what it injects (``injected``: fault
    name -> count). ``configure(changes)`` applies ``Faults.updated`` (and reseeds when ``seed``
    is among the changes); ``reset()`` returns to the faults it was created with."""

    KINDS = ("down", "latency", "error_before", "drop", "late_debit", "timeout", "error_after",
             "insufficient", "blocked", "limit")

    def __init__(self, faults):
        self._initial = faults
        self.reset()

    def reset(self):
        self.faults = self._initial
        self._random = random.Random(self.faults.seed)
        self.injected = dict.fromkeys(self.KINDS, 0)

    def configure(self, changes):
        self.faults = self.faults.updated(changes)
        if "seed" in changes:
            self._random = random.Random(self.faults.seed)
        return self.faults

    def down(self):
        """True when the wallet is down (counted)."""
        return self._count("down", self.faults.down)

    def hit(self, kind):
        """Draw the fault ``kind`` (``error_before``, ``drop``, ``late_debit``, ``timeout``,
        ``error_after``, ``insufficient``) at its rate; True when it strikes (counted)."""
        rate = getattr(self.faults, f"{kind}_rate")
        return self._count(kind, rate > 0 and self._random.random() < rate)

    async def latency(self):
        """Wait the configured latency, if any (counted)."""
        faults = self.faults
        if faults.latency_ms or faults.jitter_ms:
            self.injected["latency"] += 1
            await asyncio.sleep((faults.latency_ms + self._random.uniform(0, faults.jitter_ms)) / 1000)

    def refusal(self, call):
        """The status a debit that would be applied is refused with instead, or None (a
        ``Wallet``'s ``refusal``)."""
        faults = self.faults
        if self._count("blocked", call.player in faults.blocked_players):
            return PLAYER_BLOCKED
        if self._count("limit", call.player in faults.limit_players):
            return LIMIT_EXCEEDED
        if self.hit("insufficient"):
            return INSUFFICIENT_FUNDS
        return None

    def _count(self, kind, struck):
        if struck:
            self.injected[kind] += 1
        return struck
