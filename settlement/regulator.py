"""Game records for a regulator (GLI-19, UKGC RTS 1B style): everything needed to recreate a round,
and a date range of rounds, bets and ledger movements written as JSON Lines with a manifest.

A round's document (``round_document``) holds its game and rules version, the pay tables in force,
its times, the record it was received with and the one it is settled on (every card in order:
the dealer's, then the shared player cards), every step of its timeline with who took it (a
player's decision, ``auto_play`` on a timeout, a ``fallback`` when a balance could not cover an
extra stake; ``actor`` names the player, the game server or the operator), each bet's stake and
extra stakes, outcome and return, the ledger movements of its bets with the wallet's balance
before and after, its corrections and void with reason and actor, and the seal of its record
chain (``settlement.seals``). Operator-scoped documents hold only that operator's players' bets
and movements (the round's own steps stay: they are the game's).

``export`` writes ``rounds.jsonl``, ``bets.jsonl`` and ``ledger.jsonl`` (one JSON object a line,
sorted keys: the range's rounds, their bets, and every ledger movement posted in the range) and
``manifest.json`` (the range, the operator, and each file's line count and SHA-256). Money is a
decimal string in the currency's minor units; times are ISO 8601 in UTC.
"""

import hashlib
import json
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from django.utils import timezone

from accounts.models import LedgerEntry
from accounts.money import amount_string
from tables.models import Round
from wagering.models import Bet, bet_money
from wagering.selectors import with_money

from .models import RoundSeal
from .replay import visible_steps
from .selectors import bets_money_entries, effective_record

#: Rows read per query.
CHUNK = 2000
FILES = ("rounds.jsonl", "bets.jsonl", "ledger.jsonl")


def _time(value):
    return None if value is None else value.astimezone(UTC).isoformat()


def _money(value, units):
    return amount_string(value, units)


def bet_document(bet, units):
    """``bet`` (read with ``with_money``, its player, operator and extras loaded) as exported."""
    staked, returned, net = bet_money(bet.stake, bet.extras_total, bet.returned, bet.state)
    return {"bet": bet.pk, "round": bet.round_id, "record_id": bet.record_id, "operator": bet.player.operator.code,
            "player": bet.player.game_code, "type": bet.type, "seat": bet.seat, "currency": bet.currency_id,
            "stake": _money(bet.stake, units),
            "extras": [{"kind": x.kind, "hand": x.hand, "amount": _money(x.amount, units), "key": x.key}
                       for x in bet.extras.all()],
            "staked": _money(staked, units), "state": bet.state, "outcome": bet.outcome or None,
            "returned": _money(returned, units), "net": _money(net, units), "placed_at": _time(bet.placed_at),
            "settled_at": _time(bet.settled_at)}


def movement_document(entry, units):
    """A wallet's ledger entry (its transaction and account's player loaded) as exported: the
    transaction, the wallet, the amount and the balance before and after it."""
    txn = entry.transaction
    return {"transaction": txn.pk, "key": txn.key, "kind": txn.kind, "currency": txn.currency_id,
            "at": _time(txn.created_at), "memo": txn.memo, "account": entry.account_id,
            "operator": entry.account.operator.code,
            "player": entry.account.player.game_code if entry.account.player_id else None,
            "amount": _money(entry.amount, units),
            "balance_before": _money(None if entry.balance_after is None else entry.balance_after - entry.amount,
                                     units),
            "balance_after": _money(entry.balance_after, units),
            "chain_hash": bytes(txn.chain_hash).hex() if txn.chain_hash else None}


def _round_bets(round_, operator):
    bets = with_money(Bet.objects.filter(round=round_)).select_related("player__operator").prefetch_related("extras")
    if operator is not None:
        bets = bets.filter(player__operator=operator)
    return list(bets.order_by("pk"))


def round_document(round_, *, operator=None):
    """Everything needed to recreate ``round_`` (its table and currency loaded): see the module
    docstring. ``operator``: only that operator's players' bets and movements."""
    units = round_.table.currency.minor_units
    rules = round_.rules()
    bets = _round_bets(round_, operator)
    seal = RoundSeal.objects.filter(round=round_).order_by("-sequence").first()
    return {
        "round": round_.pk, "table": round_.table.code, "external_id": round_.external_id,
        "game": round_.table.variant, "rules_version": round_.rules_version,
        "pay_tables": {bet: {pattern: str(odds) for pattern, odds in table.items()}
                       for bet, table in rules.pay_tables.items()},
        "currency": round_.table.currency_id, "shoe": round_.shoe.sequence if round_.shoe_id else None,
        "shoe_round": round_.shoe_round, "state": round_.state,
        "times": {name: _time(getattr(round_, name)) for name in
                  ("opened_at", "closed_at", "suspended_at", "cancelled_at", "resulted_at", "settled_at", "voided_at")},
        "record_received": _scoped(round_.record, bets, operator),
        "record_settled": _scoped(effective_record(round_) if round_.record else None, bets, operator),
        "corrections": [{"sequence": c.sequence, "record": _scoped(c.record, bets, operator), "reason": c.reason,
                         "actor": c.actor_label, "at": _time(c.created_at)}
                        for c in round_.corrections.order_by("sequence")],
        "steps": [{"at": _time(e.created_at), "kind": e.kind, "by": e.actor, "detail": payload}
                  for e, payload in visible_steps(round_, None if operator is None else {b.record_id for b in bets})],
        "bets": [bet_document(b, units) for b in bets],
        "ledger": [movement_document(e, units) for e in
                   (bets_money_entries(bets).select_related("account__player", "account__operator") if bets else [])],
        "seal": None if seal is None else {"sequence": seal.sequence, "state": seal.state,
                                           "correction": seal.correction, "chain_hash": bytes(seal.chain_hash).hex(),
                                           "sealed_at": _time(seal.sealed_at)},
    }


def _scoped(record, bets, operator):
    """``record`` (a round record, or None) with only ``bets``' entries for an ``operator``."""
    if record is None or operator is None:
        return record
    mine = {b.record_id for b in bets}
    return {**record, "bets": [b for b in record.get("bets", []) if b.get("id") in mine]}


def rounds_in(date_from, date_to, operator=None):
    """The rounds opened from ``date_from`` to ``date_to`` (dates, both inclusive, UTC), oldest
    first; for an ``operator``, those with a bet of its players."""
    start, end = _range(date_from, date_to)
    rounds = Round.objects.filter(opened_at__gte=start, opened_at__lt=end).select_related("table__currency", "shoe")
    if operator is not None:
        rounds = rounds.filter(pk__in=Bet.objects.filter(player__operator=operator).values("round"))
    return rounds.order_by("opened_at", "pk")


def movements_in(date_from, date_to, operator=None):
    """The ledger entries of the transactions posted from ``date_from`` to ``date_to`` (dates, both
    inclusive, UTC), in posting order; for an ``operator``, those on its accounts."""
    start, end = _range(date_from, date_to)
    entries = LedgerEntry.objects.filter(transaction__created_at__gte=start, transaction__created_at__lt=end)
    if operator is not None:
        entries = entries.filter(account__operator=operator)
    return (entries.select_related("transaction", "account__player", "account__operator", "account__currency")
            .order_by("transaction_id", "pk"))


def _range(date_from, date_to):
    """``[start, end)``: the UTC midnights that start ``date_from`` and the day after ``date_to``;
    for ``date.max``, which has no day after, the last instant of the calendar."""
    end = datetime.max.replace(tzinfo=UTC) if date_to == date.max else \
        datetime.combine(date_to + timedelta(days=1), time.min, tzinfo=UTC)
    return datetime.combine(date_from, time.min, tzinfo=UTC), end


def _line(value):
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


class _JsonLines:
    """A JSON Lines file being written, with its line count and SHA-256."""

    def __init__(self, path):
        self.path, self.count, self.digest = path, 0, hashlib.sha256()
        self.file = path.open("w", encoding="utf-8")

    def write(self, value):
        data = _line(value)
        self.file.write(data)
        self.digest.update(data.encode())
        self.count += 1

    def close(self):
        self.file.close()
        return {"lines": self.count, "sha256": self.digest.hexdigest()}


def export(*, directory, date_from, date_to, operator=None):
    """Write to ``directory`` (created) the rounds opened from ``date_from`` to ``date_to``
    (``rounds_in``) as ``rounds.jsonl`` (``round_document``, each with its bets' movements), their
    bets as ``bets.jsonl``, the ledger movements posted in the range (``movements_in``) as
    ``ledger.jsonl``, and ``manifest.json``. ``operator``: its rounds, bets and movements only.
    Returns the manifest (a dict)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    files = {name: _JsonLines(directory / name) for name in FILES}
    try:
        for round_ in rounds_in(date_from, date_to, operator).iterator(chunk_size=CHUNK):
            document = round_document(round_, operator=operator)
            for bet in document.pop("bets"):
                files["bets.jsonl"].write(bet)
            files["rounds.jsonl"].write(document)
        for entry in movements_in(date_from, date_to, operator).iterator(chunk_size=CHUNK):
            files["ledger.jsonl"].write(movement_document(entry, entry.account.currency.minor_units))
    finally:
        counted = {name: f.close() for name, f in files.items()}
    manifest = {"format": "game-records/1", "from": date_from.isoformat(), "to": date_to.isoformat(),
                "operator": operator.code if operator is not None else None,
                "generated_at": _time(timezone.now()), "files": counted}
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def file_sha256(path):
    """The SHA-256 (hex) of the file at ``path`` (to check an export against its manifest)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()

