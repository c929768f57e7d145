"""The cards of a round as the studio's scanner reported them, and the checks a round record
passes against them (RULES 1, 10).

The game server reports every card as it comes out of the shoe (``card_scanned`` events of the
round's timeline, ``tables.services.report_play``): ``{"card": "AS", "to": <destination>}``, the
destination being ``dealer``, ``seat:N`` (classic, premium) or ``player`` (boundless: the shared
player sequence). A card read wrongly is scanned again: ``card_rescanned`` with a ``card``
replaces the last card scanned to its ``to`` (one without ``card``, a failed read, changes
nothing). The record the game server reports must hold, per destination, exactly the cards
scanned there in the order scanned; and over all rounds of a shoe no card comes out more than
8 times (8 decks) nor more than 416 cards in all, the cards burnt after the shuffle included. A
round whose record was corrected after a proven misread (settlement's ``RoundCorrection``) counts
in its shoe with the cards of its correction, the cards it really dealt, not the ones misread.
"""

import re
from collections import Counter

from .engine import parse_card
from .exceptions import InvalidInput, InvalidRecord
from .models import Round, RoundEvent

DECKS = 8
SHOE_CARDS = 52 * DECKS
SCANS = (RoundEvent.Kind.CARD_SCANNED, RoundEvent.Kind.CARD_RESCANNED)
_SEAT = re.compile(r"seat:([1-7])")


def check_scan(table, kind, payload, name, *, seats=None):
    """Raise ``InvalidInput`` (naming ``name``) unless ``payload`` (a scan event's payload, its
    ``kind`` a ``SCANS`` kind) has a destination ``to`` of ``table`` and a card code ``card``
    (optional for ``card_rescanned``). ``seats``: the seats of the round holding a seat bet (the
    only ones dealt to: a card on another could be in no valid record), None when not known."""
    to = payload.get("to")
    seat = _SEAT.fullmatch(to) if isinstance(to, str) else None
    valid = to == "dealer" or (to == "player" if table.seats is None else bool(seat) and int(seat[1]) <= table.seats)
    if not valid:
        where = "'dealer' or 'player'" if table.seats is None else f"'dealer' or 'seat:1' to 'seat:{table.seats}'"
        raise InvalidInput(f"{name}.to: {where} is required")
    if seat and seats is not None and int(seat[1]) not in seats:
        held = ", ".join(map(str, seats)) or "none"
        raise InvalidInput(f"{name}.to: seat {seat[1]} holds no seat bet this round (seats dealt to: {held})")
    if kind == RoundEvent.Kind.CARD_RESCANNED and payload.get("card") is None:
        return
    try:
        parse_card(payload.get("card"))
    except ValueError as e:
        raise InvalidInput(f"{name}.card: {e}") from None


def scanned(events):
    """``{destination: [card codes]}`` of ``events`` (``(kind, payload)`` pairs of one round's scan
    events in the order reported): the cards as finally read, each destination in scan order."""
    cards = {}
    for kind, payload in events:
        to, card = payload.get("to"), payload.get("card")
        if card is None:
            continue
        card = parse_card(card)
        if kind == RoundEvent.Kind.CARD_SCANNED:
            cards.setdefault(to, []).append(card)
        elif cards.get(to):
            cards[to][-1] = card
    return cards


def round_scans(round_ids):
    """``{round id: {destination: [cards]}}`` (``scanned``) of the rounds ``round_ids``."""
    events = {}
    for round_id, kind, payload in (RoundEvent.objects.filter(round_id__in=list(round_ids), kind__in=SCANS)
                                    .order_by("round_id", "id").values_list("round_id", "kind", "payload")):
        events.setdefault(round_id, []).append((kind, payload))
    return {round_id: scanned(found) for round_id, found in events.items()}


def record_cards(record):
    """``{destination: [card codes]}`` of a well-formed round record (docs/round-record.md)."""
    cards = {"dealer": [parse_card(c) for c in record["dealer"]]}
    for number, seat in (record.get("seats") or {}).items():
        cards[f"seat:{number}"] = [parse_card(c) for c in seat["cards"]]
    if "player_cards" in record:
        cards["player"] = [parse_card(c) for c in record["player_cards"]]
    return cards


def _path(destination):
    return {"dealer": "dealer", "player": "player_cards"}.get(destination) or \
        f"seats.{destination.removeprefix('seat:')}.cards"


def check_record_cards(round_, record, corrected=None):
    """Raise ``InvalidRecord`` (``extra["field"]``: the record's field path) unless ``record`` (a
    round record of ``round_`` the engine accepted) holds, per destination, exactly the cards the
    game server scanned there during the round, in scan order, and the round's shoe (``round_``'s
    own scans with those of every other round of the shoe, voided ones too, and its burnt cards)
    shows no card more than ``DECKS`` times and no more than ``SHOE_CARDS`` cards.
    ``corrected``: ``{round id: record}``, the corrected records of the shoe's rounds whose
    misread was proven; those rounds count with these records' cards instead of their scans."""
    shoe_rounds = list(Round.objects.filter(shoe_id=round_.shoe_id).values_list("pk", flat=True))
    scans = round_scans(shoe_rounds)
    ours, theirs = record_cards(record), scans.get(round_.pk, {})
    for destination in sorted(ours.keys() | theirs.keys()):
        if ours.get(destination, []) != theirs.get(destination, []):
            path, recorded, seen = _path(destination), ours.get(destination, []), theirs.get(destination, [])
            raise InvalidRecord(f"{path}: the record has {' '.join(recorded) or 'no card'}, the cards scanned to "
                                f"{destination} were {' '.join(seen) or 'none'}", field=path)
    scans.update((pk, record_cards(fixed)) for pk, fixed in (corrected or {}).items())
    dealt = Counter(card for by_destination in scans.values() for cards in by_destination.values() for card in cards)
    card, most = max(dealt.items(), key=lambda item: item[1], default=(None, 0))
    if most > DECKS:
        raise InvalidRecord(f"shoe: {card} came out {most} times in this shoe (8 decks: at most {DECKS}; a card "
                            "misread in an earlier round of the shoe counts as read until that round is corrected)",
                            field="shoe")
    total = sum(dealt.values()) + round_.shoe.burn_count
    if total > SHOE_CARDS:
        raise InvalidRecord(f"shoe: {total} cards dealt and burnt from this shoe, more than its {SHOE_CARDS}",
                            field="shoe")


def round_cards(round_id):
    """``{destination: [card codes]}`` (``scanned``) of round ``round_id``: the cards scanned so far."""
    return round_scans([round_id]).get(round_id, {})


def scan_events(record, reported=None):
    """The scan events that report ``record``'s cards (a well-formed round record): the dealer's up
    card first, then each seat's (or the shared player sequence), then the dealer's other cards,
    each destination in order: what a studio's scanner reports for that record (the simulator, the
    tests). ``reported``: ``{destination: [cards]}`` already reported (``round_cards``, the cards
    dealt before a decision): those are left out, and a destination's last card reported that
    ``record`` reads otherwise is corrected by a ``card_rescanned``."""
    reported = reported or {}
    events = {}
    for to, cards in record_cards(record).items():
        done = reported.get(to, [])
        fix = [] if not done or cards[len(done) - 1:len(done)] == done[-1:] else [
            {"kind": "card_rescanned", "card": cards[len(done) - 1], "to": to}]
        events[to] = fix + [{"kind": "card_scanned", "card": card, "to": to} for card in cards[len(done):]]
    dealer = events.pop("dealer")
    up = [] if reported.get("dealer") else dealer[:1]
    return up + [e for found in events.values() for e in found] + dealer[len(up):]
