"""Round lifecycle (RULES.md 3, 9, 10; ROUND_RECORD.md): open a round, suspend, resume, and take
the round record. Betting, closing and cancelling move money and live in ``wagering.services``.

Plain functions with keyword arguments, each in one database transaction, locking the round row
before anything else (then seats, then wallets, each in primary-key order). ``actor`` is a short
string naming who acts (``game-server:<user>``, ``operator:<user>``, ``system``), ``actor_user``
the Django user, if any; both go to the round's timeline (``RoundEvent``).
"""

import importlib
import json
from decimal import Decimal

from django.db import connection, transaction

from accounts.models import Account
from accounts.services import house_account
from tables.engine import InvalidRecord as EngineInvalidRecord
from tables.engine import settle
from wagering.exceptions import IllegalTransition, InvalidInput, InvalidRecord, NotFound
from wagering.models import Bet, BetExtra
from wagering.validation import check_json

from .models import Round, RoundEvent, Seat, Shoe, Table, TableLimit


def settlement_hook(module, name):
    """``<module>.<name>`` (e.g. ``settlement.services``, ``void_round``) if settlement provides it,
    else None: settlement is built after wagering, and without it rounds wait for it."""
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def event(round_, event_kind, *, actor="", actor_user=None, **payload):
    """An unsaved ``RoundEvent`` of ``round_`` (save it, or ``bulk_create`` many). ``payload``
    values must be JSON-able (money as decimal strings)."""
    return RoundEvent(round=round_, kind=event_kind, actor=actor[:100], actor_user=actor_user, payload=payload)


def table_house(table):
    """The house account of ``table`` in its currency (``table:<code>``), where its stakes go and
    its returns come from; created if missing."""
    return house_account(name=table.house_name, currency=table.currency_id)


def get_table(code):
    """The ``Table`` with ``code``; ``NotFound`` if none."""
    try:
        return Table.objects.select_related("currency").get(code=code)
    except Table.DoesNotExist:
        raise NotFound(f"no table {code!r}") from None


def lock_round(round_id, *, shared=False):
    """Load round ``round_id`` (with its table and currency) under a row lock: ``FOR UPDATE`` for a
    state change, ``FOR SHARE`` (``shared``, PostgreSQL) for placing bets, so that bets do not queue
    behind each other but a close or cancel waits for the bets in flight and they wait for it.
    Raises ``NotFound``."""
    if shared and connection.vendor == "postgresql":
        found = list(Round.objects.raw(f"SELECT * FROM {Round._meta.db_table} WHERE id = %s FOR SHARE",
                                       [round_id]))
    else:
        found = list(Round.objects.select_for_update().filter(pk=round_id))
    if not found:
        raise NotFound(f"no round {round_id}")
    round_ = found[0]
    round_.table = Table.objects.select_related("currency").get(pk=round_.table_id)
    return round_


def unseat(seat, round_, reason, *, actor="", actor_user=None):
    """Free ``seat`` (locked by the caller) and return the ``unseated`` event for ``round_``."""
    player_id, seat.player, seat.rounds_without_bet = seat.player_id, None, 0
    seat.save(update_fields=["player", "rounds_without_bet"])
    return event(round_, RoundEvent.Kind.UNSEATED, actor=actor, actor_user=actor_user,
                 seat=seat.number, player=player_id, reason=reason)


@transaction.atomic
def open_round(*, table_code, external_id, shoe, burn_count=0, actor="", actor_user=None):
    """Open betting on a new round of table ``table_code`` (RULES 3, 9).

    ``external_id``: the game server's round id (str, unique per table; opening it again returns
    the same round). ``shoe``: the shoe's sequence number (int); a new number starts a new shoe
    (shuffled now, ``burn_count`` cards burnt, RULES 1). The round's ``shoe_round`` is the shoe's
    next round number. Seated players whose balance is below the table's main-bet minimum are
    unseated (RULES 9). Returns the ``Round`` (OPEN).

    Raises ``NotFound`` (table), ``IllegalTransition`` (table not open, another round still in play,
    the shoe's cut card is out, or ``external_id`` reused with another shoe).
    """
    table = get_table(table_code)
    Table.objects.select_for_update().filter(pk=table.pk).first()  # one opener per table at a time
    existing = Round.objects.filter(table=table, external_id=external_id).select_related("shoe").first()
    if existing is not None:
        if existing.shoe.sequence != shoe:
            raise IllegalTransition(f"round {external_id} was opened on shoe {existing.shoe.sequence}")
        return existing
    if table.status != Table.Status.OPEN:
        raise IllegalTransition(f"table {table.code} is {table.status}")
    busy = Round.objects.filter(table=table, state__in=Round.IN_PLAY).first()
    if busy is not None:
        raise IllegalTransition(f"round {busy.external_id} of table {table.code} is still {busy.state}")
    shoe_row, _ = Shoe.objects.select_for_update().get_or_create(
        table=table, sequence=shoe, defaults={"burn_count": burn_count})
    if shoe_row.cut_card_out:
        raise IllegalTransition(f"shoe {shoe} of table {table.code} is finished: reshuffle and open a new shoe")
    shoe_row.rounds_dealt += 1
    shoe_row.save(update_fields=["rounds_dealt"])
    round_ = Round.objects.create(table=table, shoe=shoe_row, shoe_round=shoe_row.rounds_dealt,
                                  external_id=external_id, pay_tables=table.pay_tables)
    if table.seats:
        Seat.objects.bulk_create([Seat(table=table, number=n) for n in range(1, table.seats + 1)],
                                 ignore_conflicts=True)
    events = [event(round_, RoundEvent.Kind.OPENED, actor=actor, actor_user=actor_user,
                    shoe=shoe, shoe_round=round_.shoe_round)]
    minimum = TableLimit.objects.filter(table=table, bet_type="main").values_list("min_stake", flat=True).first()
    seats = list(Seat.objects.select_for_update().filter(table=table, player__isnull=False).order_by("pk"))
    if seats and minimum is not None:
        balances = dict(Account.objects.filter(kind=Account.Kind.WALLET, currency=table.currency,
                                               player__in=[s.player_id for s in seats])
                        .values_list("player_id", "balance"))
        events += [unseat(s, round_, "balance below the table minimum", actor=actor, actor_user=actor_user)
                   for s in seats if balances.get(s.player_id, 0) < minimum]
    RoundEvent.objects.bulk_create(events)
    return round_


@transaction.atomic
def suspend(*, round_id, reason, actor="", actor_user=None):
    """Suspend a CLOSED round after a fault (RULES 10); a supervisor resumes or cancels it, and
    settlement voids it once ``table.suspend_limit_seconds`` have passed. Returns the ``Round``.
    Raises ``NotFound``, ``IllegalTransition``."""
    round_ = lock_round(round_id)
    round_.transition(Round.State.SUSPENDED)
    round_.save(update_fields=["state", "suspended_at"])
    event(round_, RoundEvent.Kind.SUSPENDED, actor=actor, actor_user=actor_user, reason=reason).save()
    return round_


@transaction.atomic
def resume(*, round_id, actor="", actor_user=None):
    """Resume a SUSPENDED round (back to CLOSED: decisions go on; RULES 10). Returns the ``Round``.
    Raises ``NotFound``, ``IllegalTransition`` (also for a cancelled round)."""
    round_ = lock_round(round_id)
    if round_.state != Round.State.SUSPENDED:
        raise IllegalTransition(f"round {round_id} is {round_.state}, not suspended")
    round_.transition(Round.State.CLOSED)
    round_.save(update_fields=["state"])
    event(round_, RoundEvent.Kind.RESUMED, actor=actor, actor_user=actor_user).save()
    return round_


#: What the game server reports while cards come out: the timeline's evidence for disputes (the
#: round record carries the result). RULES 10: an unreadable card is scanned again until read;
#: auto-play decides for a player who does not answer (RULES 4).
PLAY_EVENTS = frozenset({RoundEvent.Kind.CARD_SCANNED, RoundEvent.Kind.CARD_RESCANNED,
                         RoundEvent.Kind.DECISION, RoundEvent.Kind.AUTO_PLAY})


@transaction.atomic
def report_play(*, round_id, events, actor="", actor_user=None):
    """Append play events to the timeline of a round whose cards are being dealt (CLOSED or
    SUSPENDED). ``events``: a list of ``{"kind": <one of PLAY_EVENTS>, ...JSON payload}``, e.g.
    ``{"kind": "card_scanned", "card": "AS", "to": "seat:3"}`` or ``{"kind": "decision", "seat": 3,
    "action": "hit"}``. All or nothing. Returns the saved ``RoundEvent`` rows. Raises ``NotFound``,
    ``IllegalTransition`` (round not being dealt), ``InvalidInput`` (unknown kind, not a list)."""
    round_ = lock_round(round_id)
    if round_.state not in (Round.State.CLOSED, Round.State.SUSPENDED) or round_.cancelled_at:
        raise IllegalTransition(f"round {round_id} is {round_.state}: no cards are being dealt")
    if not isinstance(events, list) or not events or not all(isinstance(e, dict) for e in events):
        raise InvalidInput("events must be a non-empty list of objects")
    rows = []
    for i, item in enumerate(events):
        payload = dict(item)
        kind = payload.pop("kind", None)
        if kind not in PLAY_EVENTS:
            raise InvalidInput(f"events[{i}].kind must be one of {', '.join(sorted(PLAY_EVENTS))}")
        check_json(payload, f"events[{i}]")  # no NUL (PostgreSQL's jsonb refuses it)
        # the payload as given, not as keywords: "actor" & co. are payload keys like any other
        rows.append(RoundEvent(round=round_, kind=kind, actor=actor[:100], actor_user=actor_user, payload=payload))
    return RoundEvent.objects.bulk_create(rows)


def _platform_bets(round_):
    """The bets the platform holds for ``round_`` (refunded ones left out), as check_record
    compares them: ``{record_id: ((player code, type, seat, stake), {engine kind: extra total})}``
    (follow_double counts as double, follow_split as split). Two queries of plain rows: a boundless
    round holds thousands of bets, and this runs while the game server waits for its answer."""
    bets = round_.bets.exclude(state=Bet.State.REFUNDED)
    held = {record_id: (fields, {}) for record_id, *fields in
            bets.values_list("record_id", "player__code", "type", "seat", "stake")}
    for record_id, kind, amount in (BetExtra.objects.filter(bet__in=bets)
                                     .values_list("bet__record_id", "kind", "amount")):
        totals = held[record_id][1]
        kind = kind.removeprefix("follow_")
        totals[kind] = totals.get(kind, Decimal(0)) + amount
    return held


def _as_json(value):
    """``value`` (str, int, ``Decimal`` or None) as JSON writes it, for error messages: ``"5.00"``, ``null``."""
    return json.dumps(str(value) if isinstance(value, Decimal) else value)


def check_record(round_, record):
    """Validate ``record`` (a decoded round record, ROUND_RECORD.md) for ``round_`` with the engine
    and against the bets the platform holds: the same round id, currency and shoe round; the same
    bets (by ``record_id``: player, type, seat and original stake) and, per bet, the extra stakes
    the engine derives from the actions and flags equal to the ``BetExtra`` rows (double, split,
    insurance). Returns the engine's ``RoundResult``. Raises ``InvalidRecord`` whose
    ``extra["field"]`` is the record's field path."""
    table = round_.table
    for field, expected in (("round", round_.external_id), ("currency", table.currency_id),
                            ("shoe_round", round_.shoe_round)):
        if isinstance(record, dict) and record.get(field) != expected:
            raise InvalidRecord(f"{field}: expected {expected!r}, got {record.get(field)!r}", field=field)
    try:
        result = settle(record, rules=round_.rules(), minor_units=table.currency.minor_units)
    except EngineInvalidRecord as e:
        raise InvalidRecord(str(e), field=e.path) from None
    bets = _platform_bets(round_)
    unknown = [i for i in result.bets if i not in bets]
    missing = [i for i in bets if i not in result.bets]
    if unknown or missing:
        raise InvalidRecord(f"bets: the record's bets differ from the platform's (unknown {unknown}, "
                            f"missing {missing})", field="bets")
    for index, (record_id, engine_bet) in enumerate(result.bets.items()):
        player, type_, seat, stake = bets[record_id][0]
        for field, ours, theirs in (("player", player, engine_bet.player), ("type", type_, engine_bet.type),
                                    ("seat", seat, engine_bet.seat), ("stake", stake, engine_bet.stake)):
            if ours != theirs:
                raise InvalidRecord(f"bets[{index}].{field}: the platform holds {_as_json(ours)}, the record says "
                                    f"{_as_json(theirs)}", field=f"bets[{index}].{field}")
    for index, (record_id, engine_bet) in enumerate(result.bets.items()):
        ours = bets[record_id][1]
        if ours != dict(engine_bet.extras):
            theirs = {k: str(v) for k, v in engine_bet.extras.items()}
            raise InvalidRecord(f"bets[{index}]: the actions imply extra stakes {theirs}, the platform holds "
                                f"{ {k: str(v) for k, v in ours.items()} }", field=f"bets[{index}]")
    return result


@transaction.atomic
def record_result(*, round_id, record, cut_card_out=False, actor="", actor_user=None):
    """Take the round record of a CLOSED round (ROUND_RECORD.md): validate it (``check_record``),
    store it unchanged as evidence, move the round to RESULTED and queue settlement after commit.
    ``cut_card_out``: the cut card came out in this round, the last of its shoe (RULES 1).
    The same record again for a round already RESULTED, SETTLED or SETTLEMENT_FAILED returns the
    round unchanged (safe to retry); another record is an ``IllegalTransition``. Returns the
    ``Round``. Raises ``NotFound``, ``IllegalTransition``, ``InvalidRecord``, ``InvalidInput`` (a
    NUL character in the record) (nothing changes then)."""
    round_ = lock_round(round_id)
    if round_.state in (Round.State.RESULTED, Round.State.SETTLED, Round.State.SETTLEMENT_FAILED) \
            and round_.record == record:
        return round_  # the same record again (a retry): already taken, nothing changes
    round_.transition(Round.State.RESULTED)
    check_json(record, "record")  # no NUL (PostgreSQL's jsonb refuses it)
    check_record(round_, record)
    round_.record = record
    round_.save(update_fields=["state", "resulted_at", "record"])
    if cut_card_out:
        Shoe.objects.filter(pk=round_.shoe_id).update(cut_card_out=True)
    event(round_, RoundEvent.Kind.RESULTED, actor=actor, actor_user=actor_user, cut_card_out=cut_card_out).save()
    settle_round = settlement_hook("settlement.tasks", "settle_round")
    if settle_round is not None:
        settle_round.delay_on_commit(round_.pk)
    return round_
