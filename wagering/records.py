"""The record check (docs/round-record.md): a round record is valid for a round when the engine
accepts it and it holds exactly the bets the platform holds, with the extra stakes the platform
took. Taking a record, resettling and an operator's resettle preview all check through here."""

import json
from decimal import Decimal
from types import MappingProxyType

from accounts.money import amount_string
from accounts.sql import JOINED_BY_KEY, values_list_rows
from tables.engine import InvalidRecord as EngineInvalidRecord
from tables.exceptions import InvalidRecord

from .models import Bet, BetExtra

#: The extras and follows of a bet that has none (shared, read-only).
NO_EXTRAS, NO_FOLLOWS = MappingProxyType({}), frozenset()


def _platform_bets(round_):
    """The bets the platform holds for ``round_`` (refunded ones left out), as check_record
    compares them: ``{record_id: ((player code, type, seat, stake), {engine kind: extra total},
    pk, player id, {follow kinds taken})}`` (follow_double counts as double, follow_split as split;
    a bet without extras holds the read-only ``NO_EXTRAS`` and ``NO_FOLLOWS``).
    Two queries of plain rows, their players and extras reached through their keys
    (``accounts.sql.JOINED_BY_KEY``), never by scanning those tables: a boundless round holds
    thousands of bets, and this runs while the game server waits for its answer."""
    bets = round_.bets.exclude(state=Bet.State.REFUNDED)
    extras, follows = {}, {}
    for record_id, kind, amount in values_list_rows(BetExtra.objects.filter(bet__in=bets.values("pk")).values_list(
            "bet__record_id", "kind", "amount"), planner=JOINED_BY_KEY):
        if kind.startswith("follow_"):
            follows.setdefault(record_id, set()).add(kind)
        kind = kind.removeprefix("follow_")
        totals = extras.setdefault(record_id, {})
        totals[kind] = totals.get(kind, Decimal(0)) + amount
    return {record_id: ((code, type_, seat, stake), extras.get(record_id, NO_EXTRAS), pk, player,
                        follows.get(record_id, NO_FOLLOWS))
            for record_id, pk, player, code, type_, seat, stake in values_list_rows(
                bets.values_list("record_id", "pk", "player_id", "player__game_code", "type", "seat", "stake"),
                planner=JOINED_BY_KEY)}


#: A bet's fields check_record compares, in the order of ``_platform_bets``' first item.
BET_FIELDS = ("player", "type", "seat", "stake")


def _as_json(value, minor_units):
    """``value`` (str, int, ``Decimal`` or None) as JSON writes it, for error messages: ``"5.00"``
    (money in the currency's ``minor_units``), ``null``."""
    return json.dumps(amount_string(value, minor_units) if isinstance(value, Decimal) else value)


def check_record(round_, record):
    """Validate ``record`` (a decoded round record, docs/round-record.md) for ``round_`` with the engine
    and against the bets the platform holds: the same round id, currency and shoe round; the same
    bets (by ``record_id``: player, type, seat and original stake) and, per bet, the extra stakes
    the engine derives from the actions and flags equal to the ``BetExtra`` rows (double, split,
    insurance), and a bet behind's ``follow_double`` / ``follow_split`` true only where it took that
    follow's stake. Returns ``(the engine's RoundResult, {record_id: (bet pk, player id)})``. Raises
    ``InvalidRecord`` whose ``extra["field"]`` is the record's field path."""
    table = round_.table
    minor_units = table.currency.minor_units
    for field, expected in (("round", round_.external_id), ("currency", table.currency_id),
                            ("shoe_round", round_.shoe_round)):
        if isinstance(record, dict) and record.get(field) != expected:
            raise InvalidRecord(f"{field}: expected {expected!r}, got {record.get(field)!r}", field=field)
    try:
        result = round_.result_of(record)
    except EngineInvalidRecord as e:
        raise InvalidRecord(str(e), field=e.path) from None
    bets = _platform_bets(round_)
    unknown = [i for i in result.bets if i not in bets]
    missing = [i for i in bets if i not in result.bets]
    if unknown or missing:
        raise InvalidRecord(f"bets: the record's bets differ from the platform's (unknown {unknown}, "
                            f"missing {missing})", field="bets")
    for index, (record_id, engine_bet) in enumerate(result.bets.items()):
        ours = bets[record_id][0]
        theirs = (engine_bet.player, engine_bet.type, engine_bet.seat, engine_bet.stake)
        if ours != theirs:  # the first field that differs
            field, held, said = next(f for f in zip(BET_FIELDS, ours, theirs) if f[1] != f[2])
            raise InvalidRecord(f"bets[{index}].{field}: the platform holds {_as_json(held, minor_units)}, "
                                f"the record says {_as_json(said, minor_units)}", field=f"bets[{index}].{field}")
    for index, (record_id, engine_bet) in enumerate(result.bets.items()):
        ours, theirs = bets[record_id][1], engine_bet.extras
        if ours != theirs:
            theirs, held = ({k: amount_string(v, minor_units) for k, v in extras.items()} for extras in (theirs, ours))
            raise InvalidRecord(f"bets[{index}]: the actions imply extra stakes {theirs}, the platform holds {held}",
                                field=f"bets[{index}]")
    for index, (record_id, engine_bet) in enumerate(result.bets.items()):
        for flag in ("follow_double", "follow_split"):
            if getattr(engine_bet, flag) and flag not in bets[record_id][4]:
                raise InvalidRecord(f"bets[{index}].{flag}: true, but the bet took no {flag} stake (its seat's "
                                    f"{flag.removeprefix('follow_')} was not followed)", field=f"bets[{index}].{flag}")
    return result, {record_id: (pk, player) for record_id, (_, _, pk, player, _) in bets.items()}
