"""Round lifecycle without money (RULES 3, 9, 10): open a round, suspend, resume, report play
events for the timeline. Betting and closing are ``wagering``'s; taking the round record,
cancelling, voiding and settling are ``settlement``'s.

Plain functions with keyword arguments, each in one database transaction, taking its locks in the
platform's order (``tables.locks``). ``actor`` is a short string naming who acts
(``game-server:<user>``, ``operator:<user>``, ``system``), ``actor_user`` the Django user, if any;
both go to the round's timeline (``RoundEvent``).
"""

from django.db import transaction

from accounts.exceptions import IdempotencyConflict
from accounts.selectors import player_wallets
from accounts.services import house_account

from .cards import SCANS, check_scan
from .engine.seating import keeps_seat
from .engine.shoe import BURN_COUNTS
from .exceptions import IllegalTransition, InvalidInput, NotFound
from .locks import lock_round, lock_seats, lock_shoe, lock_table
from .models import Round, RoundEvent, Seat, Shoe, Table, TableLimit
from .validation import check_json


def event(round_, event_kind, *, actor="", actor_user=None, **payload):
    """An unsaved ``RoundEvent`` of ``round_`` (save it, or ``bulk_create`` many). ``payload``
    values must be JSON-able (money as decimal strings)."""
    return RoundEvent(round=round_, kind=event_kind, actor=actor[:100], actor_user=actor_user, payload=payload)


def table_houses(table, wallets):
    """``{operator id: Account}``: the house accounts of ``table`` in its currency
    (``table:<code>``), where its stakes go and its returns come from, for the operators of
    ``wallets`` (player wallet ``Account`` rows: each operator's players play against its own
    house account); created if missing."""
    return {operator: house_account(name=table.house_name, currency=table.currency_id, operator=operator)
            for operator in {w.operator_id for w in wallets}}


def get_table(code):
    """The ``Table`` with ``code``; ``NotFound`` if none."""
    try:
        return Table.objects.select_related("currency").get(code=code)
    except Table.DoesNotExist:
        raise NotFound(f"no table {code!r}") from None


def unseat(seat, round_, reason, *, actor="", actor_user=None):
    """Free ``seat`` (locked by the caller) and return the ``unseated`` event for ``round_``."""
    player_id, seat.player, seat.rounds_without_bet = seat.player_id, None, 0
    seat.save(update_fields=["player", "rounds_without_bet"])
    return event(round_, RoundEvent.Kind.UNSEATED, actor=actor, actor_user=actor_user,
                 seat=seat.number, player=player_id, reason=reason)


@transaction.atomic
def open_round(*, table_code, external_id, shoe, burn_count=0, actor="", actor_user=None):
    """Open betting on a new round of table ``table_code`` (RULES 3, 9).

    ``external_id``: the game server's round id (str, unique per table; opening it again with the
    same ``shoe`` and ``burn_count`` returns the same round, found under the table's lock: of two
    identical calls at once, one creates it; with another shoe or burn count it is
    ``IdempotencyConflict``, as a bet's key replayed with another body). The opening's shoe and
    burn count are on the round's ``opened`` event; an ``opened`` event without a burn count
    compares the shoe only.
    ``shoe``: the shoe's sequence number (int, never below the table's latest shoe: a shoe number
    never goes backwards); a new number starts a new shoe (shuffled now, ``burn_count`` cards
    burnt, the shown card included: 2 to 11, RULES 1); a round on a shoe already open reads no
    burn count (any, 0 when none is given). The round's ``shoe_round`` is the shoe's next round
    number. Seated players whose balance is below the table's main-bet minimum are unseated
    (RULES 9; a seamless player's balance is the operator's: their seat is kept). Returns the
    ``Round`` (OPEN), with ``created``: True when this call opened it, False when
    ``external_id`` was opened before (the round as it is now).

    Raises ``NotFound`` (table), ``IllegalTransition`` (table not open, another round still in play,
    the shoe's cut card is out, a shoe number below the table's latest), ``InvalidInput`` (a new
    shoe's burn count out of ``BURN_COUNTS``), ``IdempotencyConflict``
    (``external_id`` opened before with another shoe or burn count).
    """
    table = get_table(table_code)
    lock_table(table)
    existing = Round.objects.filter(table=table, external_id=external_id).select_related("shoe").first()
    if existing is not None:
        opened = existing.events.filter(kind=RoundEvent.Kind.OPENED).values_list("payload", flat=True).first() or {}
        first = (existing.shoe.sequence, opened.get("burn_count", burn_count))
        if first != (shoe, burn_count):
            raise IdempotencyConflict(f"round {external_id} was opened on shoe {first[0]} with burn count {first[1]}, "
                                      f"not shoe {shoe} with burn count {burn_count}")
        existing.created = False
        return existing
    if table.status != Table.Status.OPEN:
        raise IllegalTransition(f"table {table.code} is {table.status}")
    busy = Round.objects.filter(table=table, state__in=Round.IN_PLAY).first()
    if busy is not None:
        raise IllegalTransition(f"round {busy.external_id} of table {table.code} is still {busy.state}")
    latest = Shoe.objects.filter(table=table).order_by("-sequence").values_list("sequence", flat=True).first()
    if latest is not None and shoe < latest:
        raise IllegalTransition(f"table {table.code} deals from shoe {latest}: shoe {shoe} is behind it "
                                "(a shoe number never goes backwards)")
    if (latest is None or shoe > latest) and burn_count not in BURN_COUNTS:
        raise InvalidInput(f"burn_count: a new shoe burns {BURN_COUNTS.start} to {BURN_COUNTS.stop - 1} cards, the "
                           f"shown card and as many as it is worth (RULES 1), not {burn_count}")
    shoe_row = lock_shoe(table, shoe, burn_count=burn_count)
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
                    shoe=shoe, shoe_round=round_.shoe_round, burn_count=burn_count)]
    minimum = TableLimit.objects.filter(table=table, bet_type="main").values_list("min_stake", flat=True).first()
    seats = lock_seats(table, occupied=True)
    if seats and minimum is not None:
        wallets = player_wallets({s.player_id for s in seats}, table.currency)
        events += [unseat(s, round_, "balance below the table minimum", actor=actor, actor_user=actor_user)
                   for s in seats if s.player_id not in wallets
                   or not keeps_seat(wallets[s.player_id].known_balance, minimum)]
    RoundEvent.objects.bulk_create(events)
    round_.created = True
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
    """Resume a SUSPENDED round (back to CLOSED: dealing and decisions go on where they stopped;
    RULES 10; ``closed_at`` stays when betting closed). Returns the ``Round`` as saved.
    Raises ``NotFound``, ``IllegalTransition`` (also for a cancelled round)."""
    round_ = lock_round(round_id)
    if round_.state != Round.State.SUSPENDED:
        raise IllegalTransition(f"round {round_id} is {round_.state}, not suspended")
    round_.transition(Round.State.CLOSED, at=round_.closed_at)
    round_.save(update_fields=["state"])
    event(round_, RoundEvent.Kind.RESUMED, actor=actor, actor_user=actor_user).save()
    return round_


#: What the game server reports while cards come out: the timeline's evidence for disputes (the
#: round record carries the result). RULES 10: an unreadable card is scanned again until read;
#: auto-play decides for a player who does not answer (RULES 4).
PLAY_EVENTS = frozenset({RoundEvent.Kind.CARD_SCANNED, RoundEvent.Kind.CARD_RESCANNED,
                         RoundEvent.Kind.DECISION, RoundEvent.Kind.AUTO_PLAY})
#: The longest text (a value or key, at any depth) of a play event's payload.
EVENT_TEXT_MAX = 200
#: The play events that record a hand's decision: the player's, or auto-play's for one who did not
#: answer (RULES 4: auto-play hits or stands).
DECISIONS = {RoundEvent.Kind.DECISION: None, RoundEvent.Kind.AUTO_PLAY: frozenset({"hit", "stand"})}
#: The hands of a seat: its own, and the second of a split (no resplit, RULES 4).
HANDS = range(1, 3)


def check_decision(round_, kind, payload, name):
    """Raise ``InvalidInput`` (naming ``name``) unless ``payload`` (a ``DECISIONS`` event's payload)
    names an ``action`` of the round's variant (auto-play: ``hit`` or ``stand``), the ``seat`` it
    is taken on (an integer 1 to the table's seats; none at a boundless table, whose shared hand
    each player plays alone: a decision there may name its bet by ``record_id``) and optionally the ``hand`` (1, or 2
    for a split's second)."""
    seats = round_.table.seats
    seat = payload.get("seat")
    if seats is None and "seat" in payload:
        raise InvalidInput(f"{name}.seat: a boundless table has no seats (a decision may name its bet by record_id)")
    if seats is not None and (type(seat) is not int or not 1 <= seat <= seats):
        raise InvalidInput(f"{name}.seat: an integer 1 to {seats} is required")
    actions = DECISIONS[kind] or round_.rules().actions
    if not isinstance(payload.get("action"), str) or payload["action"] not in actions:
        raise InvalidInput(f"{name}.action: one of {', '.join(sorted(actions))} is required")
    hand = payload.get("hand", HANDS.start)
    if type(hand) is not int or hand not in HANDS:
        raise InvalidInput(f"{name}.hand: {HANDS.start} or {HANDS.stop - 1} is required (left out: 1)")


def _seats_dealt_to(round_):
    """The seats of ``round_`` (closed) holding a seat bet, as its ``betting_closed`` event names
    them (``wagering.closing``); None where it names none (a boundless round, or one closed before
    the event named them)."""
    closed = round_.events.filter(kind=RoundEvent.Kind.BETTING_CLOSED).order_by("-pk").values_list(
        "payload", flat=True).first()
    return set(closed["seats"]) if closed and "seats" in closed else None


@transaction.atomic
def report_play(*, round_id, events, actor="", actor_user=None):
    """Append play events to the timeline of a round whose cards are being dealt (CLOSED; a
    SUSPENDED round takes none until it is resumed: it resumes where it stopped, RULES 10).
    ``events``: a list of ``{"kind": <one of PLAY_EVENTS>, ...JSON payload}``, e.g.
    ``{"kind": "card_scanned", "card": "AS", "to": "seat:3"}`` or ``{"kind": "decision", "seat": 3,
    "action": "hit"}``; scans name a card code and a destination of the table (``tables.cards``:
    the round record is checked against them). All or nothing. Returns the saved ``RoundEvent``
    rows. Raises ``NotFound``, ``IllegalTransition`` (round not being dealt, suspended),
    ``InvalidInput`` (unknown kind, not a list, a scan's card or destination (a seat holding no
    seat bet this round included), a decision's seat,
    action or hand (``check_decision``), a ``record_id`` (the bet an event names) that is no
    string, a text longer than ``EVENT_TEXT_MAX``). Other payload keys are kept as given."""
    round_ = lock_round(round_id)
    if round_.state != Round.State.CLOSED or round_.cancelled_at:
        why = "resume it first" if round_.state == Round.State.SUSPENDED else "no cards are being dealt"
        raise IllegalTransition(f"round {round_id} is {round_.state}: {why}")
    if not isinstance(events, list) or not events or not all(isinstance(e, dict) for e in events):
        raise InvalidInput("events must be a non-empty list of objects")
    rows, seats = [], _seats_dealt_to(round_)
    for i, item in enumerate(events):
        payload = dict(item)
        kind = payload.pop("kind", None)
        if not isinstance(kind, str) or kind not in PLAY_EVENTS:
            raise InvalidInput(f"events[{i}].kind must be one of {', '.join(sorted(PLAY_EVENTS))}")
        check_json(payload, f"events[{i}]", max_length=EVENT_TEXT_MAX)  # no NUL: PostgreSQL's jsonb refuses it
        if "record_id" in payload and not isinstance(payload["record_id"], str):
            raise InvalidInput(f"events[{i}].record_id: a bet's record id is a string")
        if kind in SCANS:
            check_scan(round_.table, kind, payload, f"events[{i}]", seats=seats)
        else:
            check_decision(round_, kind, payload, f"events[{i}]")
        # the payload as given, not as keywords: "actor" & co. are payload keys like any other
        rows.append(RoundEvent(round=round_, kind=kind, actor=actor[:100], actor_user=actor_user, payload=payload))
    return RoundEvent.objects.bulk_create(rows)
