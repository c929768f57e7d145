"""Extra stakes at decision time (RULES 4, 6): doubles, splits, insurance, and a bet behind
following its seat's double or split; each debited at once (ledger key ``<kind>:<bet>[:<hand>]``),
or, when the wallet cannot cover it, the RULES 4 fallback recorded instead.
"""

from dataclasses import dataclass

from django.db import transaction

from accounts.exceptions import IdempotencyConflict, PlatformError
from accounts.locks import lock_wallets
from accounts.models import Operator
from accounts.money import amount_string
from tables.cards import round_cards
from tables.engine import fallback, parse_card, score, why_illegal
from tables.engine.extras import (
    extra_stake,
    own_prerequisite,
    seat_prerequisite,
    why_extra_refused,
    why_not_now,
    why_not_scanned,
)
from tables.exceptions import IllegalTransition, InvalidInput, NotFound
from tables.locks import lock_round
from tables.models import Round, RoundEvent
from tables.services import event, table_houses
from wallets.port import Debit, Take, drop_debits, open_debits, send_debits, take

from .exceptions import InvalidExtra, wallet_refusal
from .models import Bet, BetExtra
from .placement import no_player, stakers
from .validation import check_extra_request, well_typed

Kind = RoundEvent.Kind


@dataclass
class ExtraOutcome:
    """What ``add_extra_stake(s)`` did: ``extra`` = the ``BetExtra`` (None if none was taken);
    ``action`` = what the game server applies to the hand: the requested kind when taken, else the
    RULES 4 fallback (``"hit"``/``"stand"`` for a double or split; None: insurance not bought, the
    behind bet does not follow); ``error``: the ``PlatformError`` that rejected a request of
    ``add_extra_stakes`` (then nothing was taken)."""

    extra: BetExtra | None
    action: str | None
    error: Exception | None = None

    @property
    def applied(self):
        """True when the extra stake was taken."""
        return self.extra is not None


class _Extras:
    """One ``add_extra_stakes`` call on a locked CLOSED round: its bets, their locked wallets, the
    players who may stake new money (``placement.stakers``) and the extra stakes already taken
    loaded once; each request checked in turn, with balances and taken extras kept up to date in
    memory as requests are accepted."""

    def __init__(self, round_, requests, debits=None):
        self.round, self.table, self.debits = round_, round_.table, debits
        self.rules = round_.rules()
        ids = {r.get("bet") for r in requests if well_typed(check_extra_request, r)}
        self.bets = {b.record_id: b
                     for b in Bet.objects.select_related("player").filter(round=round_, record_id__in=ids)}
        self.wallets = lock_wallets({b.player_id for b in self.bets.values()}, self.table.currency)
        self.available = {pid: w.known_balance for pid, w in self.wallets.items()}  # None: the operator's to tell
        self.taken = {(x.bet_id, x.kind, x.hand): x for x in BetExtra.objects.filter(bet__in=self.bets.values())}
        self.stakers = stakers(self.table, self.wallets)  # who may stake new money, as for a new bet
        self._seat_extras = None
        self._cards = None
        self.new, self.events, self.to_debit = [], [], []

    def seat_extras(self):
        """``{(seat, kind, hand)}`` of the extras taken by the round's seat (main) bets: those
        stored (loaded once) and those taken earlier in this batch (the batch is taken in order)."""
        if self._seat_extras is None:
            self._seat_extras = set(BetExtra.objects.filter(bet__round=self.round, bet__type="main")
                                    .values_list("bet__seat", "kind", "hand"))
            self._seat_extras |= {(x.bet.seat, x.kind, x.hand) for x in self.new if x.bet.type == "main"}
        return self._seat_extras

    def cards(self, destination):
        """The cards scanned so far to ``destination`` (``dealer``, ``seat:N``, ``player``;
        ``tables.cards.round_cards``, looked up once)."""
        if self._cards is None:
            self._cards = round_cards(self.round.pk)
        return self._cards.get(destination, [])

    def take(self, request, actor, actor_user):
        """Check one request (see ``add_extra_stake``) and take it in memory; returns its
        ``ExtraOutcome``. Raises the error that rejects it."""
        check_extra_request(request)
        record_id, kind, hand, cards = (request.get("bet"), request.get("kind"), request.get("hand", 1),
                                        request.get("cards"))
        target = self.bets.get(record_id)
        if target is None:
            raise NotFound(f"no bet {record_id!r} in round {self.round.pk}")
        if target.state != Bet.State.ACCEPTED:
            raise IllegalTransition(f"bet {record_id} is {target.state}")
        if (reason := why_extra_refused(self.rules, target.type, kind, hand)) is not None:
            raise InvalidExtra(reason)
        hand_cards, score_ = _hand(cards) if kind in ("double", "split") else (None, None)
        existing = self.taken.get((target.pk, kind, hand))
        if existing is not None:
            if existing.cards is not None and existing.cards != hand_cards:
                raise IdempotencyConflict(f"bet {record_id}'s {kind} (hand {hand}) was taken on cards "
                                          f"{' '.join(existing.cards)}, not {' '.join(hand_cards)}")
            return ExtraOutcome(existing, kind)
        if target.player_id not in self.stakers:
            raise NotFound(no_player(target.player.game_code, self.table.currency_id))
        self._check_context(target, kind, hand)
        self._check_legal(target, kind, hand, hand_cards)
        amount = extra_stake(kind, target.stake, self.table.currency.minor_units)
        shown = amount_string(amount, self.table.currency.minor_units)  # the timeline's money
        if amount <= 0:
            raise InvalidExtra(f"half of {target.stake} is less than one minor unit")
        key = BetExtra.key_for(kind, target.pk, hand)
        wallet = self.wallets.get(target.player_id)
        status = self._not_covered(wallet, key, amount)
        if status is not None:
            action = fallback(self.rules, kind, score_) if kind in ("double", "split") else None
            self.events.append(event(self.round, Kind.FALLBACK, actor=actor, actor_user=actor_user, bet=target.pk,
                                     record_id=record_id, kind=kind, hand=hand, needed=shown, action=action,
                                     **({"wallet": status} if status else {})))
            return ExtraOutcome(None, action, None if status in ("", "INSUFFICIENT_FUNDS") else wallet_refusal(status))
        if wallet.journal and self.debits is None:
            self.to_debit.append(Debit(key=key, kind=kind, wallet=wallet, amount=amount, round_ref=str(self.round.pk),
                                       table_ref=self.table.code, bets=(target.pk,)))
        extra = BetExtra(bet=target, kind=kind, hand=hand, amount=amount, key=key, cards=hand_cards)
        if self.available[target.player_id] is not None:
            self.available[target.player_id] -= amount
        self.taken[(target.pk, kind, hand)] = extra
        if target.type == "main" and self._seat_extras is not None:
            self._seat_extras.add((target.seat, kind, hand))
        self.new.append(extra)
        self.events.append(event(self.round, Kind.EXTRA_STAKE, actor=actor, actor_user=actor_user, bet=target.pk,
                                 record_id=record_id, kind=kind, hand=hand, amount=shown))
        return ExtraOutcome(extra, kind)

    def _not_covered(self, wallet, key, amount):
        """None when ``amount`` can be taken from ``wallet`` (a seamless player's: its debit ``key``
        answered OK, or not sent yet in the pass that finds the debits), else why not: "" (a
        transfer wallet short of it) or the operator's status ("" too when unknown)."""
        if wallet is None:
            return ""
        if not wallet.journal:
            return None if self.available[wallet.player_id] >= amount else ""
        if self.debits is None:
            return None
        movement = self.debits.get(key)
        if movement is not None and movement.state == movement.State.OK:
            return None
        return getattr(movement, "status", "") or "UNKNOWN"

    def _check_context(self, bet, kind, hand):
        """The extra stakes an extra depends on (the engine's ``own_prerequisite`` and
        ``seat_prerequisite``): a double on hand 2 needs the split; a follow needs the seat's own
        double / split on that hand (RULES 6), stored or taken earlier in the batch. Every extra is
        taken when the dealer's cards scanned so far say decisions are being taken (the engine's
        ``why_not_now``): insurance on a reported ace up card, before the hole card (the peek); the
        others after the peek and never after a dealer blackjack (RULES 3, 4)."""
        if (reason := why_not_now(self.rules, kind, self.cards("dealer"))) is not None:
            raise InvalidExtra(reason)
        own = own_prerequisite(kind, hand)
        if own is not None and not any((bet.pk, own, h) in self.taken for h in (1, 2)):
            raise InvalidExtra(f"no second hand: bet {bet.record_id} was not split")
        seat_kind = seat_prerequisite(kind)
        if seat_kind is not None and (bet.seat, seat_kind, hand) not in self.seat_extras():
            raise InvalidExtra(f"seat {bet.seat} did not {seat_kind} (hand {hand})")

    def _check_legal(self, bet, kind, hand, hand_cards):
        """A seat's double or split must name the hand's cards (``hand_cards``, normalised) as
        scanned to its place (the engine's ``why_not_scanned``) and be legal on them (RULES 4,
        ``why_illegal``): a double on two cards, not on split aces; a split of a pair, not of a split
        hand; neither on a finished hand (21). The dealer's card matters only to surrender, which
        takes no extra stake."""
        if kind not in ("double", "split"):
            return
        was_split = hand == 2 or (bet.pk, "split", 1) in self.taken
        place = "player" if self.rules.shared_hand else f"seat:{bet.seat}"
        reason = why_not_scanned(hand_cards, self.cards(place), hand=hand, split=was_split,
                                 shared=self.rules.shared_hand)
        if reason is not None:
            raise InvalidExtra(f"cards {' '.join(hand_cards)} (hand {hand}) to {place}: {reason}")
        reason = why_illegal(self.rules, kind, hand_cards, None, split=was_split,
                             split_aces=was_split and hand_cards[0][0] == "A")
        if reason is not None:
            raise InvalidExtra(f"cards {' '.join(hand_cards)}: {reason}")

    def save(self):
        """Write the extras taken, their stakes (through the wallet port, one posting), the follow
        flags and the events."""
        if self.new:
            BetExtra.objects.bulk_create(self.new)
            houses = table_houses(self.table, self.wallets.values())
            take([Take(key=x.key, wallet=self.wallets[x.bet.player_id],
                       house=houses[self.wallets[x.bet.player_id].operator_id], amount=x.amount,
                       debit=x.key if self.wallets[x.bet.player_id].journal else None) for x in self.new])
            follows = [x for x in self.new if x.kind in ("follow_double", "follow_split")]
            for x in follows:
                setattr(x.bet, x.kind, True)
            for flag in ("follow_double", "follow_split"):
                Bet.objects.bulk_update({x.bet for x in follows if x.kind == flag}, [flag])
        RoundEvent.objects.bulk_create(self.events)


def add_extra_stakes(*, round_id, extras, actor="", actor_user=None):
    """Take many extra stakes on round ``round_id`` (CLOSED) in one transaction, all debited in ONE
    ledger ``post``; each request stands alone, in order (a double on hand 2 may follow its split
    in the same batch). ``extras``: a list of dicts ``{"bet": record id, "kind": str, "hand": 1|2
    (default 1), "cards": [card codes] (double, split)}``, each as for ``add_extra_stake`` (same
    rules, amounts, keys, fallbacks and events). A new extra stake is new money: its player must
    be one who may place a new bet (``placement.stakers``: a live session, an agreement of their
    operator with the studio), else ``not_found`` as for a new bet; an extra stake taken before
    answers its replay whatever. Returns one ``ExtraOutcome`` per request, in order;
    a rejected one carries ``error`` (codes ``not_found``, ``illegal_transition``, ``invalid_extra``,
    ``invalid_input``, ``idempotency_conflict``; for a seamless player whose operator's wallet did not take it, a
    ``WalletRefused``: ``wallet_unavailable``, ``player_blocked``, ``limit_exceeded``, with the
    fallback as its ``action``, recorded as for a wallet short of it) and took nothing. Raises
    ``NotFound`` (round), ``IllegalTransition`` (round not CLOSED or cancelled)."""
    if not _seamless_bets_in(round_id, extras):
        return _take(round_id, extras, None, actor, actor_user)
    debits = send_debits(_open_debits(round_id, extras).values())
    try:
        return _take(round_id, extras, debits, actor, actor_user)
    finally:  # taken or not, raised or not: a debit answered OK without its extra stake is rolled back now
        drop_debits(debits.values())


def _locked_closed_round(round_id):
    round_ = lock_round(round_id, shared=True)
    if round_.state != Round.State.CLOSED or round_.cancelled_at:
        raise IllegalTransition(f"extra stakes are taken while round {round_id} is played, not when {round_.state}")
    return round_


def _seamless_bets_in(round_id, requests):
    """True when a request of ``requests`` names a bet of a seamless operator's player."""
    seamless = list(Operator.objects.filter(wallet_mode=Operator.WalletMode.SEAMLESS).values_list("pk", flat=True))
    ids = {r.get("bet") for r in requests if isinstance(r, dict) and isinstance(r.get("bet"), str)}
    return bool(seamless and ids) and Bet.objects.filter(round_id=round_id, record_id__in=ids,
                                                         player__operator__in=seamless).exists()


@transaction.atomic(durable=True)
def _open_debits(round_id, requests):
    """The first pass: the debits of the seamless extra stakes the requests would take, recorded
    before they are sent. Returns ``{key: WalletMovement}``."""
    batch = _Extras(_locked_closed_round(round_id), requests)
    for request in requests:
        try:
            batch.take(request, "", None)
        except PlatformError:
            continue
    return open_debits(batch.to_debit)


@transaction.atomic
def _take(round_id, requests, debits, actor, actor_user):
    """The pass that takes: see ``add_extra_stakes``."""
    batch = _Extras(_locked_closed_round(round_id), requests, debits or {})
    outcomes = []
    for request in requests:
        try:
            outcomes.append(batch.take(request, actor, actor_user))
        except PlatformError as error:
            outcomes.append(ExtraOutcome(None, None, error))
    batch.save()
    return outcomes


def add_extra_stake(*, round_id, bet, kind, hand=1, cards=None, actor="", actor_user=None):
    """Take an extra stake on bet ``bet`` (its ``record_id``) of a CLOSED round (RULES 4, 6).

    ``kind``: ``double`` or ``split`` (seat / boundless main bet; amount = the stake), ``insurance``
    (main or behind; half the stake rounded down to the minor unit), ``follow_double`` /
    ``follow_split`` (behind bet, after the seat's double / split; amount = the stake). ``hand``: 1,
    or 2 for a double on the second split hand. ``cards``: the hand's card codes (required for
    double and split: the fallback depends on the score). When the balance cannot cover it, the
    RULES 4 fallback (``tables.engine.fallback``) is returned and recorded (``fallback`` event)
    and nothing is debited. The same (bet, kind, hand) again returns the extra already taken; a
    double or split again on other cards than it was taken on is ``IdempotencyConflict`` (409
    ``idempotency_conflict``, as a bet's key replayed with another body).
    Ledger key ``<kind>:<bet>`` (``<kind>:<bet>:2`` for hand 2). Returns an ``ExtraOutcome``
    (``add_extra_stakes`` with one request).

    Raises ``NotFound`` (round, bet, a player who may not stake now), ``IllegalTransition`` (round
    not CLOSED or cancelled, bet not ACCEPTED), ``InvalidExtra`` (kind not allowed for the bet /
    hand), ``InvalidInput`` (cards), ``IdempotencyConflict`` (a double or split taken before on
    other cards),
    ``WalletRefused`` (a seamless operator's wallet did not take it; its fallback is recorded).
    """
    outcome = add_extra_stakes(round_id=round_id, actor=actor, actor_user=actor_user,
                               extras=[{"bet": bet, "kind": kind, "hand": hand, "cards": cards}])[0]
    if outcome.error is not None:
        raise outcome.error
    return outcome


def _hand(cards):
    """``(card codes normalised, score)`` of a double's or split's ``cards``; ``InvalidInput``
    when they are missing or malformed."""
    if not isinstance(cards, list) or not cards:
        raise InvalidInput("cards: the hand's card codes are required for a double or split")
    try:
        hand_cards = [parse_card(c) for c in cards]
        return hand_cards, score(hand_cards)
    except ValueError as e:
        raise InvalidInput(f"cards: {e}") from None
