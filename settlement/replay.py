"""The ROUND REPLAY view-model: one round -> plain dataclasses the operator templates render.

Built ONCE per page from the engine's result (``Round.result_of(record).to_dict()``) of the
round's effective record (the latest correction if the round was resettled, else the record
received), the round's timeline (``RoundEvent``) and its bets. Nothing here recomputes a rule:
cards, decisions (auto-play marked), outcomes, odds and returns all come from ``tables.engine``. A
fixed number of queries per round, whatever the number of bets (the bet list is capped at
``MAX_BETS``; the Bet Record has the rest).
"""

from dataclasses import dataclass, field

from django.db.models import Q
from django.db.models.fields.json import KeyTextTransform

from tables.engine import InvalidRecord
from tables.models import Round, RoundEvent
from wagering.models import Bet

from .selectors import effective_record

#: Bets listed on a replay page; a boundless round can hold thousands (the Bet Record lists all).
MAX_BETS = 500
#: Timeline events shown on a replay page (the latest ones); the RoundEvent list has them all.
MAX_EVENTS = 200
SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


@dataclass(frozen=True)
class Card:
    """A card as shown: ``rank`` (``10`` for T), suit ``symbol`` and ``red`` (hearts, diamonds)."""

    code: str

    @property
    def rank(self):
        return "10" if self.code[:-1] in ("T", "10") else self.code[:-1]

    @property
    def symbol(self):
        return SUIT_SYMBOLS[self.code[-1]]

    @property
    def red(self):
        return self.code[-1] in "HD"


def cards(codes):
    """``Card`` objects for a list of card codes."""
    return [Card(c) for c in codes]


@dataclass
class Hand:
    """One played hand: cards, score (``soft``), outcome, decisions in order as ``(action, by)``
    with ``by`` = ``player`` or ``auto`` (auto-play), and the flags the engine reports."""

    cards: list
    score: int
    soft: bool = False
    outcome: str = ""
    decisions: list = field(default_factory=list)
    blackjack: bool = False
    split: bool = False
    doubled: bool = False
    surrendered: bool = False

    @classmethod
    def from_engine(cls, d):
        """From an engine hand dict (``PlayedHand.to_dict``)."""
        return cls(cards=cards(d["cards"]), score=d["score"], soft=d["soft"], outcome=d["outcome"],
                   decisions=[(x["action"], x["by"]) for x in d["decisions"]], blackjack=d["blackjack"],
                   split=d["split"], doubled=d["doubled"], surrendered=d["surrendered"])


@dataclass
class Spot:
    """A seat (classic/premium) or, in boundless, one path of decisions shared by some players:
    ``label``, its ``hands`` (split hands side by side), the seat's ``actions`` as recorded and the
    insufficient-balance ``fallbacks`` (RoundEvents) of the bets on it."""

    label: str
    hands: list
    actions: list = field(default_factory=list)
    fallbacks: list = field(default_factory=list)
    bet_ids: list = field(default_factory=list)


@dataclass
class BetLine:
    """A bet of the round with its settlement: the ``Bet`` row, the engine's bet dict ``result``
    (None when the record does not settle), its ``hands`` and its ``fallbacks``."""

    bet: object
    result: dict | None
    hands: list
    fallbacks: list


@dataclass
class Replay:
    """Everything a replay page shows of one round (see the module docstring)."""

    round: Round
    record: dict | None
    corrected: bool
    dealer: Hand | None
    spots: list
    events: list
    bets: list
    more_bets: int
    more_events: int = 0
    error: str = ""
    totals: dict = field(default_factory=dict)
    partial: bool = False


#: The round's own steps: no player or bet of their own in them. A replay of some of the round's
#: bets lists these without their payload (its counts and totals are every bet's).
ROUND_STEPS = frozenset({
    RoundEvent.Kind.OPENED, RoundEvent.Kind.BETTING_CLOSED, RoundEvent.Kind.CARD_SCANNED,
    RoundEvent.Kind.CARD_RESCANNED, RoundEvent.Kind.DECISION, RoundEvent.Kind.AUTO_PLAY, RoundEvent.Kind.SUSPENDED,
    RoundEvent.Kind.RESUMED, RoundEvent.Kind.CANCELLED, RoundEvent.Kind.RESULTED, RoundEvent.Kind.SETTLED,
    RoundEvent.Kind.VOIDED, "settlement_failed", "resettled"})


def record_ref(payload):
    """The record id of the bet an event's ``payload`` names: its ``record_id`` when that is a
    string; None (no bet's) otherwise, whatever JSON is stored there."""
    ref = payload.get("record_id") if isinstance(payload, dict) else None
    return ref if isinstance(ref, str) else None


def visible_steps(round_, record_ids=None):
    """``[(RoundEvent, payload)]``: ``round_``'s timeline in order as a partial replay shows it to
    those who see the bets ``record_ids`` (a set; None: every bet, every payload): their bets'
    events with their payload, and the round's own steps (``ROUND_STEPS``) without it (a step's
    counts and totals are every bet's)."""
    events = RoundEvent.objects.filter(round=round_).order_by("pk")
    if record_ids is None:
        return [(e, e.payload) for e in events]
    mine = Bet.objects.filter(round=round_, record_id__in=list(record_ids)).values("record_id")  # a subquery:
    # SQLite compares a JSON key's text to a subquery's, not to a list of parameters
    events = events.annotate(record_ref=KeyTextTransform("record_id", "payload")).filter(
        Q(kind__in=ROUND_STEPS) | Q(record_ref__in=mine))
    return [(e, e.payload if record_ref(e.payload) in record_ids else {}) for e in events]


def build_replay(round_id, *, bet_id=None, round_=None, bets=None):
    """The ``Replay`` of round ``round_id`` (``Round.DoesNotExist`` if none). ``bet_id``: list this
    bet first (the bet page), so it is shown even when the round has more than ``MAX_BETS`` bets.
    ``round_``: the round already read with its table, currency and shoe (not read again). The
    timeline holds the latest ``MAX_EVENTS`` events (``more_events`` counts the earlier ones);
    insufficient-balance fallbacks are read in full (one query, only that kind).

    ``bets``: the bets the replay may show (a ``Bet`` queryset, e.g. one operator's players'), or
    None for all. Given, the replay is ``partial``: only those of the round's bets, the seats and
    paths they are on, their events (by the payload's ``record_id``) and the round's own steps
    (``ROUND_STEPS``) without payload; no record totals."""
    if round_ is None or round_.pk != round_id:
        round_ = Round.objects.select_related("table__currency", "shoe").get(pk=round_id)
    partial = bets is not None
    visible = bets.filter(round=round_) if partial else round_.bets.all()
    shown = set(visible.values_list("record_id", flat=True)) if partial else None
    timeline = RoundEvent.objects.filter(round=round_)
    if partial:
        timeline = timeline.annotate(record_ref=KeyTextTransform("record_id", "payload")).filter(
            Q(kind__in=ROUND_STEPS) | Q(record_ref__in=visible.values("record_id")))
    latest = list(timeline.select_related("actor_user").order_by("-id")[:MAX_EVENTS + 1])
    more_events = 0
    if len(latest) > MAX_EVENTS:
        more_events = timeline.count() - MAX_EVENTS
        latest = latest[:MAX_EVENTS]
        fallback_events = list(timeline.filter(kind=RoundEvent.Kind.FALLBACK).order_by("id"))
    else:
        fallback_events = [e for e in reversed(latest) if e.kind == RoundEvent.Kind.FALLBACK]
    events = latest[::-1]
    if partial:
        for e in events:
            if record_ref(e.payload) not in shown:
                e.payload = {}  # shown, never saved: a round step's counts and totals are every bet's
    bets_qs = visible.select_related("player").prefetch_related("extras").order_by("id")
    bets = list(bets_qs[:MAX_BETS])
    if bet_id is not None and all(b.pk != bet_id for b in bets):
        bets = list(bets_qs.filter(pk=bet_id)) + bets[:MAX_BETS - 1]
    if len(bets) < MAX_BETS:
        more = 0
    else:
        more = max(0, (len(shown) if partial else round_.bets.count()) - len(bets))
    record = effective_record(round_)
    corrected = record is not round_.record
    fallbacks = {}
    for e in fallback_events:
        fallbacks.setdefault(record_ref(e.payload), []).append(e)
    replay = Replay(round=round_, record=record, corrected=corrected, dealer=None, spots=[], events=events,
                    bets=[], more_bets=more, more_events=more_events, partial=partial)
    result = None
    if record:
        try:
            result = round_.result_of(record).to_dict()
        except (InvalidRecord, ValueError) as e:
            replay.error = str(e)
    if result:
        replay.dealer = Hand(cards=cards(result["dealer"]["cards"]), score=result["dealer"]["score"],
                             blackjack=result["dealer"]["blackjack"],
                             outcome="bust" if result["dealer"]["bust"] else "")
        replay.spots = _spots(record, result, fallbacks, shown)
        replay.totals = {} if partial else result["totals"]
    engine_bets = result["bets"] if result else {}
    for bet in bets:
        detail = engine_bets.get(bet.record_id)
        hands = [Hand.from_engine(h) for h in (detail or {}).get("hands", [])]
        replay.bets.append(BetLine(bet=bet, result=detail, hands=hands, fallbacks=fallbacks.get(bet.record_id, [])))
    return replay


def _spots(record, result, fallbacks, shown=None):
    """Seats (classic/premium) or decision paths (boundless) with their hands and fallbacks;
    ``shown``: the record ids of the bets a partial replay shows (the spots without any of them
    are left out), or None for all."""
    def ours(ids):
        return ids if shown is None else [i for i in ids if i in shown]

    spots = []
    if result.get("seats") is not None:
        by_seat = {}
        for b in record.get("bets", []):
            by_seat.setdefault(str(b.get("seat")), []).append(str(b["id"]))
        for number, seat in sorted(result["seats"].items(), key=lambda kv: int(kv[0])):
            ids = ours(by_seat.get(number, []))
            if ids or shown is None:
                spots.append(Spot(label=f"Seat {number}", hands=[Hand.from_engine(h) for h in seat["hands"]],
                                  actions=record["seats"][number].get("actions", []), bet_ids=ids,
                                  fallbacks=[e for i in ids for e in fallbacks.get(i, [])]))
    by_path = {}
    for bet_id, bet in result["bets"].items():
        if bet.get("path") is not None:
            by_path.setdefault(bet["path"], []).append(bet_id)
    for index, path in enumerate(result.get("paths") or []):
        ids = ours(by_path.get(index, []))
        if ids or shown is None:
            spots.append(Spot(label=f"Path {index + 1} ({len(ids)} bet{'s' if len(ids) != 1 else ''})",
                              hands=[Hand.from_engine(h) for h in path["hands"]], actions=path["actions"],
                              bet_ids=ids[:20], fallbacks=[e for i in ids for e in fallbacks.get(i, [])]))
    return spots


@dataclass
class CardChange:
    """One position of a card list in two records: ``where`` (``dealer``, ``seat 3``,
    ``player cards``), ``index`` (1-based), the cards ``before`` and ``after`` (None when absent)."""

    where: str
    index: int
    before: Card | None
    after: Card | None

    @property
    def changed(self):
        return self.before != self.after


def record_diff(before, after):
    """Card-by-card comparison of two round records (a resettle's preview): ``[CardChange]`` for
    every position of the dealer's cards, each seat's cards and the boundless shared sequence."""
    def lists(record):
        found = {"dealer": (record or {}).get("dealer") or [],
                 "player cards": (record or {}).get("player_cards") or []}
        for number, seat in ((record or {}).get("seats") or {}).items():
            found[f"seat {number}"] = seat.get("cards") or []
        return found

    old, new = lists(before), lists(after)
    changes = []
    for where in sorted(old.keys() | new.keys(), key=lambda w: (w != "dealer", w)):
        a, b = old.get(where, []), new.get(where, [])
        for i in range(max(len(a), len(b))):
            changes.append(CardChange(where, i + 1, Card(a[i]) if i < len(a) else None,
                                      Card(b[i]) if i < len(b) else None))
    return changes
