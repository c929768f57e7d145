"""The operator's books and the protocol's answers (docs/wallet-api.md): players with a balance
per currency, the movements recorded under their transaction ids (each with its first answer),
and tombstones (rollbacks of debits never seen).

Every method runs to its end without awaiting: on one asyncio loop a call's checks and its effect
are one step, so concurrent calls for one player or one transaction id are applied one after the
other, never interleaved. Every change of the books is a record (a dict of JSON values: ``open``
a player's wallet, ``move`` money under a transaction id, set a ``player``'s balance or block)
applied by ``_apply``, the one place that changes them, for a live call as for a journal's
replay (``load``); a live record is then handed to the journal (``operator_wallet.journal``).

A movement is kept as a plain tuple of strings and numbers, ``(call, fields, amount, status,
balance)``: the call (debit, credit, rollback), its fields (the body less the envelope) as
canonical JSON, the amount it moved (``Decimal``; a rollback's is what it gave back), and its
first answer's status and balance. The garbage collector stops tracking such tuples, so its
pauses do not grow with the number of movements kept."""

import json
from dataclasses import dataclass, field
from decimal import Decimal

from operator_wallet.protocol import (
    DUPLICATE_TRANSACTION,
    INSUFFICIENT_FUNDS,
    OK,
    PLAYER_BLOCKED,
    ROLLED_BACK,
    UNKNOWN_TRANSACTION,
    BadCall,
)

ZERO = Decimal(0)
#: What a rollback must name as its debit does.
ROLLBACK_MATCHES = ("player", "currency", "round")
#: Fields as canonical JSON: equal fields, equal text.
canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode


@dataclass(slots=True)
class Player:
    """A player: blocked (debits refused) or not, and a ``Decimal`` balance per currency opened."""

    blocked: bool = False
    balances: dict = field(default_factory=dict)


class Wallet:
    """The books of one operator's wallet.

    ``currencies``: the ``operator_wallet.money.Currencies`` kept. ``initial_balance``: the
    balance (a numeric string in major units) a player's wallet opens with in each currency, on
    the first call that names it; ``ValueError`` when a currency cannot hold it exactly.
    ``refusal(call)``: consulted for a debit that would be applied, returns a status to answer
    instead (``INSUFFICIENT_FUNDS``, ``PLAYER_BLOCKED``, ``LIMIT_EXCEEDED``) or None (the sandbox's
    faults). ``journal``: receives every live record (``append(record)``, ``truncate()``).

    ``balance``, ``debit``, ``credit`` and ``rollback`` take a ``operator_wallet.protocol.Call``
    and return the answer's JSON object; ``rollback`` raises ``BadCall`` when its reference is a
    movement other than a debit, or a debit of another player, currency or round."""

    def __init__(self, currencies, initial_balance, refusal, journal):
        self.currencies = currencies
        self._initial = {code: currencies.text(code, currencies.exact(code, initial_balance))
                         for code in currencies.units}
        self._refusal = refusal
        self._journal = journal
        self.reset_books()

    def reset_books(self):
        """Forget every player, movement and tombstone, and zero the counters. (The journal is
        the caller's: ``reset`` truncates it too.)"""
        self.players = {}
        #: transaction id -> (call, fields, amount, status, balance), as the module says
        self.movements = {}
        #: debit transaction id -> the id of the rollback that undid it
        self.undone = {}
        #: debit transaction id -> the id of the rollback that found it missing
        self.tombstones = {}
        #: replays (a known id, the same body: the first answer again), duplicates (a known id,
        #: another body), rolled_back (debits refused as ROLLED_BACK), applied_twice (money moved
        #: under an id already recorded: 0 by construction, every call looks its id up first)
        self.counters = {"replays": 0, "duplicates": 0, "rolled_back": 0, "applied_twice": 0}

    def reset(self):
        """``reset_books`` and truncate the journal: the wallet as freshly started without state."""
        self.reset_books()
        self._journal.truncate()

    def load(self, records):
        """Apply ``records`` (a journal's, in order) to the books without journaling them again."""
        for record in records:
            self._apply(record)

    # -- the calls ----------------------------------------------------------------------------

    def balance(self, call):
        return {"status": OK, "balance": self._text(call.currency, self._opened(call.player, call.currency))}

    def debit(self, call):
        known = self._known(call)
        if known is not None:
            return known
        balance = self._opened(call.player, call.currency)
        status = (PLAYER_BLOCKED if self.players[call.player].blocked else self._refusal(call)) or (
            INSUFFICIENT_FUNDS if balance < call.amount else None)
        if status is not None:
            return self._answer(status, call)
        return self._move(call, call.amount, OK)

    def credit(self, call):
        known = self._known(call)
        if known is not None:
            return known
        self._opened(call.player, call.currency)
        return self._move(call, call.amount, OK)

    def rollback(self, call):
        known = self._known(call)
        if known is not None:
            return known
        debit = self.movements.get(call.reference)
        if debit is not None:
            name, fields, amount = debit[0], json.loads(debit[1]), debit[2]
            if name != "debit":
                raise BadCall(f"{call.reference!r} is a {name}, not a debit: only debits are rolled back")
            differ = [key for key in ROLLBACK_MATCHES if fields[key] != call.fields[key]]
            if differ:
                raise BadCall(f"the rollback's {', '.join(differ)} differ from debit {call.reference!r}'s")
        self._opened(call.player, call.currency)
        if debit is None:
            return self._move(call, ZERO, UNKNOWN_TRANSACTION)
        return self._move(call, ZERO if call.reference in self.undone else amount, OK)

    # -- the sandbox's administration -----------------------------------------------------------

    def set_player(self, player, blocked=None, currency=None, balance=None):
        """Block or unblock ``player`` (``blocked``: a bool) and/or set its balance in ``currency``
        (``balance``: an amount string as the protocol writes it); the player is created if new.
        Returns the player as ``snapshot`` shows it. ``ValueError`` on a malformed argument."""
        if not isinstance(player, str) or not player:
            raise ValueError("player must be a non-empty string")
        record = {"op": "player", "player": player}
        if blocked is not None:
            if not isinstance(blocked, bool):
                raise ValueError("blocked must be true or false")
            record["blocked"] = blocked
        if balance is not None or currency is not None:
            if currency not in self.currencies:
                raise ValueError(f"currency {currency!r} is not kept by this wallet")
            record["currency"] = currency
            record["balance"] = self._text(currency, self.currencies.amount(currency, balance))
        self._do(record)
        return self._player_view(self.players[player])

    def snapshot(self):
        """The books as JSON values: ``players`` (code -> blocked, balances per currency),
        ``transactions`` (id -> the call, its fields, the amount moved, the first answer, a
        debit's ``rolled_back_by``), ``tombstones`` (debit id -> the rollback that found it
        missing, its player, currency and round), ``counters``."""
        transactions = {}
        for tid, (name, fields, amount, status, balance) in self.movements.items():
            fields = json.loads(fields)
            transactions[tid] = {"call": name, **fields, "amount": self._text(fields["currency"], amount),
                                 "answer": self._first_answer(tid, status, balance)}
            if name == "debit":
                transactions[tid]["rolled_back_by"] = self.undone.get(tid)
        return {
            "players": {code: self._player_view(player) for code, player in self.players.items()},
            "transactions": transactions,
            "tombstones": {
                debit: {"rollback_transaction_id": rollback,
                        **{key: transactions[rollback][key] for key in ROLLBACK_MATCHES}}
                for debit, rollback in self.tombstones.items()},
            "counters": dict(self.counters),
        }

    # -- inside -------------------------------------------------------------------------------

    def _known(self, call):
        """The answer to a call whose transaction id is already known, or None when it is new: the
        first answer again (same call, same fields) unless the debit was rolled back since;
        ``ROLLED_BACK`` for a debit with a tombstone; ``DUPLICATE_TRANSACTION`` otherwise."""
        tid = call.transaction_id
        movement = self.movements.get(tid)
        if movement is None and tid not in self.tombstones:
            return None
        if movement is None:
            same = call.name == "debit"
        else:
            same = movement[0] == call.name and movement[1] == canonical(call.fields)
            if same:
                self.counters["replays"] += 1
        if not same:
            self.counters["duplicates"] += 1
            return self._answer(DUPLICATE_TRANSACTION, call)
        if movement is None or tid in self.undone:
            self.counters["rolled_back"] += 1
            return self._answer(ROLLED_BACK, call)
        return self._first_answer(tid, movement[3], movement[4])

    def _opened(self, player, currency):
        """``player``'s balance in ``currency``, its wallet opened at the initial balance if new."""
        account = self.players.get(player)
        if account is None or currency not in account.balances:
            self._do({"op": "open", "player": player, "currency": currency, "balance": self._initial[currency]})
            account = self.players[player]
        return account.balances[currency]

    def _answer(self, status, call):
        """A refusal's answer: ``status`` and the player's balance now, nothing moved."""
        balance = self._opened(call.player, call.currency)
        return {"status": status, "balance": self._text(call.currency, balance), "transaction_id": call.transaction_id}

    @staticmethod
    def _first_answer(tid, status, balance):
        return {"status": status, "balance": balance, "transaction_id": tid}

    def _move(self, call, amount, status):
        return self._do({"op": "move", "transaction_id": call.transaction_id, "call": call.name,
                         "fields": call.fields, "amount": self._text(call.currency, amount), "status": status})

    def _do(self, record):
        answer = self._apply(record)
        self._journal.append(record)
        return answer

    def _apply(self, record):
        """Change the books by ``record``; a ``move`` returns its answer."""
        op = record["op"]
        if op == "move":
            return self._apply_move(record)
        if op not in ("open", "player"):
            raise ValueError(f"unknown record {op!r}")
        player = self.players.setdefault(record["player"], Player())
        if "blocked" in record:
            player.blocked = record["blocked"]
        if "balance" in record:
            player.balances[record["currency"]] = Decimal(record["balance"])

    def _apply_move(self, record):
        tid, name, fields, status = record["transaction_id"], record["call"], record["fields"], record["status"]
        amount, currency = Decimal(record["amount"]), fields["currency"]
        if tid in self.movements:
            self.counters["applied_twice"] += 1
        balances = self.players[fields["player"]].balances
        balances[currency] += -amount if name == "debit" else amount
        if name == "rollback":
            reference = fields["reference_transaction_id"]
            if reference not in self.movements:
                self.tombstones.setdefault(reference, tid)
            else:
                self.undone.setdefault(reference, tid)
        balance = self._text(currency, balances[currency])
        self.movements[tid] = (name, canonical(fields), amount, status, balance)
        return self._first_answer(tid, status, balance)

    def _text(self, currency, amount):
        return self.currencies.text(currency, amount)

    def _player_view(self, player):
        return {"blocked": player.blocked,
                "balances": {code: self._text(code, value) for code, value in player.balances.items()}}
