"""Bets: placing them (the stake is debited at once), extra stakes, closing betting and cancelling
a round (RULES.md 4, 6, 8, 9, 10). The round lifecycle without money is in ``tables.services``.

Money moves only through the ledger (``accounts.services.post``), from the player's wallet to the
table's house account ``table:<code>`` and back, under these keys:
``stake:<bet>`` (a bet's stake), ``<kind>:<bet>[:<hand>]`` (an extra stake: ``double``, ``split``,
``insurance``, ``follow_double``, ``follow_split``), ``refund:<bet>`` and ``refund:<kind>:<bet>[:<hand>]``
(refunds). Amounts are ``Decimal`` in the table currency's major units with its minor-unit decimals.

Locks, always in this order: the round row (``FOR SHARE`` to bet, ``FOR UPDATE`` to change its
state), then wallets, then seats, each set in primary-key order.

On PostgreSQL, ``place_bets``' bulk reads (wallets, known keys) and its insert of the bets with their
``bet_placed`` events are single statements with binary array parameters (``wagering.pg``); the
ORM does the same elsewhere (SQLite, the zero-setup default).
"""

from dataclasses import dataclass, field
from decimal import ROUND_DOWN, Decimal

from django.db import IntegrityError, connection, transaction
from django.db.models import F, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.exceptions import IdempotencyConflict, InsufficientFunds, LedgerError
from accounts.models import Account, LedgerTransaction, Player
from accounts.money import parse_amount
from accounts.services import Posting, can_take_seat, post
from tables.engine import fallback, parse_card, round_down, score, why_illegal
from tables.models import Round, RoundEvent, Seat, Shoe, Variant
from tables.services import event, lock_round, table_house, unseat

from . import pg
from .exceptions import (BehindOwnSeat, BettingClosed, IllegalTransition, InvalidExtra, InvalidInput,
                         LimitExceeded, NotFound, SeatNotAllowed, SeatTaken, SideBetUnavailable,
                         WageringError)
from .models import Bet, BetExtra
from .validation import check_bet_request, check_extra_request, json_safe

Kind = RoundEvent.Kind
MIRROR = "#mirror"


@dataclass
class BetOutcome:
    """What became of one bet request (index ``index`` of the list given to ``place_bets``):
    ``bets`` = the ``Bet`` and, for a premium seat bet mirrored on the player's second seat, the
    mirrored ``Bet``; ``created`` is False when the idempotency key had already placed them (no
    second debit); ``error`` is the ``WageringError``/``LedgerError`` (with ``.code``) that rejected
    the request, in which case nothing was placed."""

    index: int
    bets: list = field(default_factory=list)
    created: bool = False
    error: Exception | None = None


@dataclass
class ExtraOutcome:
    """What ``add_extra_stake(s)`` did: ``extra`` = the ``BetExtra`` (None if none was taken);
    ``action`` = what the game server applies to the hand: the requested kind when taken, else the
    RULES 4 fallback (``"hit"``/``"stand"`` for a double or split; None: insurance not bought, the
    behind bet does not follow); ``error``: the ``WageringError`` that rejected a request of
    ``add_extra_stakes`` (then nothing was taken)."""

    extra: BetExtra | None
    action: str | None
    error: Exception | None = None

    @property
    def applied(self):
        """True when the extra stake was taken."""
        return self.extra is not None


def _wallets_query(currency, *, lock):
    """The wallets in ``currency`` (a ``Currency``), their currency loaded, locked in pk order if ``lock``."""
    wallets = Account.objects.filter(kind=Account.Kind.WALLET, currency=currency).select_related("currency")
    return wallets.select_for_update(of=("self",)).order_by("pk") if lock else wallets


def _well_typed(check, request):
    """True if ``check`` (``wagering.validation``) passes ``request``."""
    try:
        check(request)
    except (WageringError, LedgerError):
        return False
    return True


def player_wallets(players, currency, *, lock=False):
    """``{player_id: wallet Account}`` of ``players`` (a set of player ids) in ``currency`` (a
    ``Currency``), locked in pk order if ``lock``. Unlocked on PostgreSQL, ``pg.wallets`` (by
    index; the fields a posting does not read are deferred)."""
    if not lock and connection.vendor == "postgresql":
        return {w.player_id: w for w in pg.wallets(currency, players)}
    return {w.player_id: w for w in _wallets_query(currency, lock=lock).filter(player__in=players)}


class _Placement:
    """One ``place_bets`` call: the round's context loaded once (players, locked wallets, limits,
    seats and the round's seat bets), then each request checked in turn against it, with balances
    and seats kept up to date in memory as requests are accepted."""

    def __init__(self, round_, requests):
        self.round = round_
        self.table = round_.table
        self.rules = self.table.rules()
        self.minor_units = self.table.currency.minor_units
        self.closed = round_.state != Round.State.OPEN or round_.cancelled_at is not None
        self.now = timezone.now()  # the bets of one call are placed at one instant
        self.limits = {limit.bet_type: limit for limit in self.table.limits.all()}
        requests = [r for r in requests if _well_typed(check_bet_request, r)]  # no bad type reaches a query
        codes = {r.get("player") for r in requests if isinstance(r.get("player"), str)}
        self.wallets, self.players = self._wallets_and_players(codes)
        self.available = {pid: w.balance for pid, w in self.wallets.items()}
        keys = {r.get("key") for r in requests if isinstance(r.get("key"), str)}
        if (self.rules.seats_per_player or 1) > 1:  # premium: a mirrored seat bet has a key of its own
            keys |= {k + MIRROR for k in keys}
        record_ids = {i for i in (r.get("record_id") or r.get("key") for r in requests) if isinstance(i, str)}
        if connection.vendor == "postgresql":
            known = pg.known_bets(round_, keys, record_ids)
        else:
            known = Bet.objects.filter(Q(idempotency_key__in=keys) | Q(round=round_, record_id__in=record_ids))
        self.existing, self.record_ids = {}, set()
        for bet in known:  # one query for both: the keys already placed, the record ids already used
            if bet.idempotency_key in keys:
                self.existing[bet.idempotency_key] = bet
            if bet.round_id == round_.pk and bet.record_id in record_ids:
                self.record_ids.add(bet.record_id)
        self.seats, self.main, self.behind, self.taken = {}, {}, {}, []
        if not self.rules.shared_hand:
            self.seats = {s.number: s for s in Seat.objects.select_for_update().filter(table=self.table).order_by("pk")}
            for bet in self.round.bets.filter(state=Bet.State.PLACED, type__in=["main", "behind"]):
                if bet.type == "main":
                    self.main[bet.seat] = bet
                else:
                    self.behind.setdefault(bet.player_id, set()).add(bet.seat)

    def _wallets_and_players(self, codes):
        """``({player_id: locked wallet}, {code: Player})`` for the player ``codes``: the wallets
        with their players in one query; players without a wallet in the table currency by a second
        one, only if there are any (they are rejected later for lack of funds, not as unknown)."""
        currency = self.table.currency
        if connection.vendor == "postgresql":
            wallets = pg.lock_wallets(currency, codes)
        else:
            wallets = _wallets_query(currency, lock=True).filter(player__code__in=codes).select_related("player")
        wallets = {w.player_id: w for w in wallets}
        players = {w.player.code: w.player for w in wallets.values()}
        if missing := codes - players.keys():
            players.update((p.code, p) for p in Player.objects.filter(code__in=missing))
        return wallets, players

    # -- one request ------------------------------------------------------------------------------

    def check(self, request):
        """Check one request and return the unsaved ``Bet`` rows it places (or the existing ones for
        a repeated key). Raises the error that rejects it."""
        key, bet_type, seat_no = request.get("key"), request.get("type"), request.get("seat")
        if not isinstance(key, str) or not key or len(key) > 120:
            raise InvalidInput("key: a non-empty string of at most 120 characters is required")
        player = self.players.get(request.get("player"))
        if player is None:
            raise NotFound(f"no player {request.get('player')!r}")
        stake = parse_amount(request.get("stake"), self.minor_units)
        if key in self.existing:
            return self._replay(key, player, bet_type, seat_no, stake)
        if self.closed:
            raise BettingClosed(f"betting on round {self.round.pk} is closed ({self.round.state})")
        if bet_type not in self.rules.bet_types:
            raise SideBetUnavailable(f"{self.table.variant} tables take no {bet_type!r} bets")
        if not self.rules.offered(bet_type, self.round.shoe_round):
            raise SideBetUnavailable(f"{bet_type} is offered up to shoe round "
                                     f"{self.rules.last_shoe_round[bet_type]}; this is round {self.round.shoe_round}")
        self._check_limits(bet_type, stake)
        placements = self._placements(player, bet_type, seat_no, stake)
        total = sum(s for _, s in placements)
        if self.available.get(player.pk, 0) < total:
            raise InsufficientFunds(f"player {player.code} has {self.available.get(player.pk, 0)}, the bet needs {total}")
        record_id = request.get("record_id") or key
        if not isinstance(record_id, str) or record_id in self.record_ids:
            raise IdempotencyConflict(f"record id {record_id!r} is already used in round {self.round.pk}")
        # table and currency set here, not left to CopiedForeignKey: wagering.pg inserts without the ORM
        bets = [Bet(round=self.round, table_id=self.table.pk, currency_id=self.table.currency_id, player=player,
                    type=bet_type, seat=n, stake=s, idempotency_key=key + MIRROR * i, record_id=record_id + MIRROR * i,
                    placed_at=self.now)
                for i, (n, s) in enumerate(placements)]
        self._accept(player, bets)
        return bets

    def _replay(self, key, player, bet_type, seat_no, stake):
        bet, mirror = self.existing[key], self.existing.get(key + MIRROR)
        stakes = {stake} if mirror is None else {stake, self._half(bet_type, stake)}
        if (bet.round_id, bet.player_id, bet.type, bet.seat) != (self.round.pk, player.pk, bet_type, seat_no) \
                or bet.stake not in stakes:
            raise IdempotencyConflict(f"key {key!r} already placed a different bet")
        return [bet] if mirror is None else [bet, mirror]

    def _step(self, bet_type):
        limit = self.limits.get(bet_type)
        return limit.chip_step if limit else Decimal(1).scaleb(-self.minor_units)

    def _half(self, bet_type, stake):
        """Half of ``stake`` rounded down to the chip step (RULES 9 [decision])."""
        step = self._step(bet_type)
        return (stake / 2 / step).to_integral_value(rounding=ROUND_DOWN) * step

    def _check_limits(self, bet_type, stake):
        limit = self.limits.get(bet_type)
        if limit is None:
            return
        if not limit.min_stake <= stake <= limit.max_stake:
            raise LimitExceeded(f"{bet_type} stakes are {limit.min_stake} to {limit.max_stake}, not {stake}")
        if stake % limit.chip_step:
            raise LimitExceeded(f"{bet_type} stakes are multiples of {limit.chip_step}, not {stake}")

    def _placements(self, player, bet_type, seat_no, stake):
        """``[(seat number or None, stake)]`` the request places, by the seat rules (RULES 6, 9)."""
        if self.rules.shared_hand:
            if seat_no is not None:
                raise SeatNotAllowed(f"{self.table.variant} tables have no seats")
            return [(None, stake)]
        seat = self.seats.get(seat_no)
        if seat is None:
            raise SeatNotAllowed(f"a {bet_type} bet needs a seat 1-{len(self.seats)}, not {seat_no!r}")
        if bet_type == "main":
            return self._seat_bet(player, seat, stake)
        if seat.player_id is None:
            raise SeatNotAllowed(f"seat {seat.number} is empty: {bet_type} bets go on occupied seats only")
        if bet_type == "behind":
            if seat.player_id == player.pk:
                raise BehindOwnSeat(f"player {player.code} sits on seat {seat.number} and may not bet behind it")
            if not self.rules.seated_may_bet_behind and self._held(player):
                raise BehindOwnSeat(f"a seated player may not bet behind in {self.table.variant}")
        return [(seat.number, stake)]

    def _held(self, player, but=None):
        return [s for s in self.seats.values() if s.player_id == player.pk and s is not but]

    def _seat_bet(self, player, seat, stake):
        """A seat (main) bet: RULES 9 seats, premium mirroring."""
        if not can_take_seat(player, self.table.currency):
            raise SeatNotAllowed(f"player {player.code}'s account or currency never takes a seat")
        if seat.player_id not in (None, player.pk):
            raise SeatTaken(f"seat {seat.number} is taken by another player")
        if seat.number in self.main:
            raise SeatTaken(f"seat {seat.number} already has a seat bet this round")
        held = self._held(player, but=seat)
        if seat.player_id is None:
            if len(held) >= self.rules.seats_per_player:
                raise SeatNotAllowed(f"a player holds at most {self.rules.seats_per_player} seat(s) in {self.table.variant}")
            behind = self.behind.get(player.pk, set())
            if seat.number in behind:
                raise BehindOwnSeat(f"player {player.code} bets behind seat {seat.number} and may not take it")
            if behind and not self.rules.seated_may_bet_behind:
                raise SeatNotAllowed(f"a player betting behind may not take a seat in {self.table.variant}")
        placements = [(seat.number, stake)]
        for other in held:
            if other.number in self.main:
                if self.main[other.number].stake != stake:
                    raise SeatNotAllowed(f"stakes on a player's two seats must be equal "
                                         f"({self.main[other.number].stake} on seat {other.number})")
            elif self.available.get(player.pk, 0) >= 2 * stake:
                placements.append((other.number, stake))
            else:
                half = self._half("main", stake)
                limit = self.limits.get("main")
                if half <= 0 or (limit and half < limit.min_stake):
                    raise LimitExceeded(f"{stake} split over two seats is below the minimum")
                placements = [(seat.number, half), (other.number, half)]
        return placements

    def _accept(self, player, bets):
        self.available[player.pk] -= sum(b.stake for b in bets)
        for bet in bets:
            self.existing[bet.idempotency_key] = bet
            self.record_ids.add(bet.record_id)
            if bet.type == "behind":
                self.behind.setdefault(player.pk, set()).add(bet.seat)
            elif bet.type == "main" and bet.seat is not None:
                self.main[bet.seat] = bet
                seat = self.seats[bet.seat]
                if seat.player_id is None:
                    seat.player = player
                    self.taken.append(seat)


@transaction.atomic
def place_bets(*, round_id, bets, actor="", actor_user=None, amounts_as_strings=False):
    """Place many bets on round ``round_id`` in one transaction; each request stands alone.

    ``bets``: a list of dicts ``{"key": str (the game server's idempotency key), "player": player
    code, "type": Bet.Type, "stake": decimal string or Decimal, "seat": int or None, "record_id":
    str or None (the bet's id in the round record; default the key)}``. Every accepted stake is
    debited at once (ledger ``stake:<bet>``), all in ONE ledger ``post``. The rules: RULES 8
    (types offered, shoe-round limits), the table's limits, RULES 6 and 9 (seats, behind, mirrors).
    A key seen before returns its bet(s) with ``created=False`` and no second debit; the same key
    with another body is rejected with ``idempotency_conflict``.

    Returns a ``BetOutcome`` per request, in order; rejected requests carry ``error`` (codes:
    ``betting_closed``, ``not_found``, ``invalid_amount``, ``insufficient_funds``,
    ``limit_exceeded``, ``seat_taken``, ``seat_not_allowed``, ``behind_own_seat``,
    ``side_bet_unavailable``, ``idempotency_conflict``, ``invalid_input``) and a ``bet_rejected``
    event. Raises ``NotFound`` for an unknown round. Each request's field types are checked first
    (``wagering.validation.check_bet_request``; ``amounts_as_strings``: the API, stakes must be strings).
    """
    round_ = lock_round(round_id, shared=True)
    placement = _Placement(round_, bets)
    outcomes, new, events = [], [], []
    for index, request in enumerate(bets):
        outcome = BetOutcome(index)
        try:
            check_bet_request(request, amounts_as_strings=amounts_as_strings)
            fresh = not isinstance(request.get("key"), str) or request["key"] not in placement.existing
            outcome.bets = placement.check(request)
            outcome.created = fresh
        except (WageringError, LedgerError) as error:
            outcome.error = error
            events.append(event(round_, Kind.BET_REJECTED, actor=actor, actor_user=actor_user,
                                request={json_safe(k): json_safe(v) for k, v in list(request.items())[:16]}
                                if isinstance(request, dict) else None,
                                code=error.code, detail=str(error)))
        if outcome.created:
            new += outcome.bets
        outcomes.append(outcome)
    events += [event(round_, Kind.SEATED, actor=actor, actor_user=actor_user, seat=s.number,
                     player=s.player.code) for s in placement.taken]
    RoundEvent.objects.bulk_create(events, batch_size=2000)
    if new:
        try:  # no savepoint of its own: the error leaves place_bets, whose transaction rolls back
            _insert_bets(round_, new, actor=actor, actor_user=actor_user)
        except IntegrityError:  # a concurrent request used one of these keys for another player
            raise IdempotencyConflict("an idempotency key or record id of this batch was used concurrently") from None
        house = table_house(round_.table)
        post([Posting(key=b.stake_key(), kind=LedgerTransaction.Kind.STAKE, source=placement.wallets[b.player_id],
                      destination=house, amount=b.stake) for b in new])
        Seat.objects.bulk_update(placement.taken, ["player"])
    return outcomes


def _insert_bets(round_, bets, *, actor, actor_user):
    """Insert ``bets`` (unsaved ``Bet`` rows of ``round_``; they get their pks) and then one
    ``bet_placed`` event per bet, in order. PostgreSQL: one statement (``wagering.pg``); elsewhere
    the ORM. Raises ``IntegrityError`` if an idempotency key or record id is taken."""
    payloads = [{"record_id": b.record_id, "player": b.player.code, "type": b.type, "seat": b.seat,
                 "stake": str(b.stake)} for b in bets]
    if connection.vendor == "postgresql":
        pg.insert_bets(round_, bets, payloads, actor=actor, actor_user=actor_user)
        return
    Bet.objects.bulk_create(bets, batch_size=2000)
    RoundEvent.objects.bulk_create([event(round_, Kind.BET_PLACED, actor=actor, actor_user=actor_user, bet=b.pk,
                                          **payload) for b, payload in zip(bets, payloads)], batch_size=2000)


def place_bet(*, round_id, key, player, type, stake, seat=None, record_id=None, actor="", actor_user=None,
              amounts_as_strings=False):
    """Place one bet (``place_bets`` with one request: same arguments, same rules). Returns its
    ``BetOutcome`` (``.bets``: the bet, plus its premium mirror if any; ``.created``). Raises the
    error that rejected it (its ``bet_rejected`` event is kept)."""
    outcome = place_bets(round_id=round_id, actor=actor, actor_user=actor_user,
                         amounts_as_strings=amounts_as_strings, bets=[
        {"key": key, "player": player, "type": type, "stake": stake, "seat": seat, "record_id": record_id}])[0]
    if outcome.error is not None:
        raise outcome.error
    return outcome


def refund_bets(round_, bets, *, actor="", actor_user=None):
    """Refund ``bets`` (a ``Bet`` list, extras prefetched) of ``round_`` (a locked ``Round``) in full,
    stake and every extra stake (``refund:<bet>``, ``refund:<kind>:<bet>``; RULES 10), mark them
    REFUNDED with outcome ``void`` and ``returned`` = everything they staked (a settled bet's earlier
    return is replaced: its reversal is posted by settlement), and return one unsaved
    ``bet_refunded`` event per bet. Used by ``close_betting``
    (seat emptied) and by settlement's ``void_round``."""
    if not bets:
        return []
    table = round_.table
    house = table_house(table)
    wallets = player_wallets({b.player_id for b in bets}, table.currency)
    postings = []
    for bet in bets:
        wallet = wallets[bet.player_id]
        postings.append(Posting(key=bet.refund_key(), kind=LedgerTransaction.Kind.REFUND, source=house,
                                destination=wallet, amount=bet.stake))
        postings += [Posting(key=x.refund_key(), kind=LedgerTransaction.Kind.REFUND, source=house,
                             destination=wallet, amount=x.amount) for x in bet.extras.all()]
    post(postings)
    extras = BetExtra.objects.filter(bet=OuterRef("pk")).values("bet").annotate(total=Sum("amount")).values("total")
    Bet.objects.filter(pk__in=[b.pk for b in bets]).update(  # a void's return is everything staked back
        state=Bet.State.REFUNDED, outcome="void", returned=F("stake") + Coalesce(Subquery(extras), Decimal(0)),
        settled_at=timezone.now())
    return [event(round_, Kind.BET_REFUNDED, actor=actor, actor_user=actor_user, bet=b.pk, record_id=b.record_id,
                  refunded=str(b.stake + sum((x.amount for x in b.extras.all()), Decimal(0)))) for b in bets]


@transaction.atomic
def close_betting(*, round_id, actor="", actor_user=None):
    """Close betting on an OPEN round (RULES 3, 6, 9): the round becomes CLOSED, its bets ACCEPTED.
    Seated variants: a seat without a seat bet has its behind and pair(s) bets refunded
    (``seat_emptied``); its occupant keeps it for this one round (grace) and is unseated after a
    second round in a row without a seat bet. Returns the ``Round``. Raises ``NotFound``,
    ``IllegalTransition``."""
    round_ = lock_round(round_id)
    round_.transition(Round.State.CLOSED)
    round_.save(update_fields=["state", "closed_at"])
    events, orphans = [], []
    if round_.table.variant != Variant.BOUNDLESS:
        bets = list(round_.bets.filter(state=Bet.State.PLACED).prefetch_related("extras"))
        seated = {b.seat for b in bets if b.type == "main"}
        for seat in Seat.objects.select_for_update().filter(table=round_.table).order_by("pk"):
            if seat.number in seated:
                if seat.rounds_without_bet:
                    seat.rounds_without_bet = 0
                    seat.save(update_fields=["rounds_without_bet"])
                continue
            on_seat = [b for b in bets if b.seat == seat.number]
            orphans += on_seat
            if on_seat or seat.player_id:
                events.append(event(round_, Kind.SEAT_EMPTIED, actor=actor, actor_user=actor_user, seat=seat.number,
                                    player=seat.player_id, refunded=[b.pk for b in on_seat]))
            if seat.player_id:
                seat.rounds_without_bet += 1
                if seat.rounds_without_bet >= 2:
                    events.append(unseat(seat, round_, "two rounds without a seat bet", actor=actor,
                                         actor_user=actor_user))
                else:
                    seat.save(update_fields=["rounds_without_bet"])
        events += refund_bets(round_, orphans, actor=actor, actor_user=actor_user)
    accepted = round_.bets.filter(state=Bet.State.PLACED).update(state=Bet.State.ACCEPTED)
    events.insert(0, event(round_, Kind.BETTING_CLOSED, actor=actor, actor_user=actor_user,
                           accepted=accepted, refunded=len(orphans)))
    RoundEvent.objects.bulk_create(events)
    return round_


#: Extra-stake kinds each bet type may take (RULES 4 main bets, RULES 6 behind).
EXTRAS_BY_TYPE = {"main": {"double", "split", "insurance"}, "behind": {"insurance", "follow_double", "follow_split"}}


class _Extras:
    """One ``add_extra_stakes`` call on a locked CLOSED round: its bets, their locked wallets and
    the extra stakes already taken loaded once; each request checked in turn, with balances and
    taken extras kept up to date in memory as requests are accepted."""

    def __init__(self, round_, requests):
        self.round, self.table = round_, round_.table
        ids = {r.get("bet") for r in requests if _well_typed(check_extra_request, r)}
        self.bets = {b.record_id: b for b in Bet.objects.select_related("player").filter(round=round_, record_id__in=ids)}
        self.wallets = player_wallets({b.player_id for b in self.bets.values()}, self.table.currency, lock=True)
        self.available = {pid: w.balance for pid, w in self.wallets.items()}
        self.taken = {(x.bet_id, x.kind, x.hand): x for x in BetExtra.objects.filter(bet__in=self.bets.values())}
        self._seat_extras = None
        self.new, self.events = [], []

    def seat_extras(self):
        """``{(seat, kind, hand)}`` of the extras taken by the round's seat (main) bets (loaded once)."""
        if self._seat_extras is None:
            self._seat_extras = set(BetExtra.objects.filter(bet__round=self.round, bet__type="main")
                                    .values_list("bet__seat", "kind", "hand"))
        return self._seat_extras

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
        if kind not in EXTRAS_BY_TYPE.get(target.type, ()):
            raise InvalidExtra(f"a {target.type} bet takes no {kind}")
        if hand not in (1, 2) or (hand == 2 and kind not in ("double", "follow_double")):
            raise InvalidExtra(f"no {kind} on hand {hand}")
        score_ = _score(cards) if kind in ("double", "split") else None
        existing = self.taken.get((target.pk, kind, hand))
        if existing is not None:
            return ExtraOutcome(existing, kind)
        self._check_context(target, kind, hand)
        self._check_legal(target, kind, hand, cards)
        minor_units = self.table.currency.minor_units
        amount = target.stake if kind != "insurance" else round_down(target.stake / 2, minor_units)
        if amount <= 0:
            raise InvalidExtra(f"half of {target.stake} is less than one minor unit")
        if self.available.get(target.player_id, Decimal(0)) < amount:
            action = fallback(self.table.rules(), kind, score_) if kind in ("double", "split") else None
            self.events.append(event(self.round, Kind.FALLBACK, actor=actor, actor_user=actor_user, bet=target.pk,
                                     record_id=record_id, kind=kind, hand=hand, needed=str(amount), action=action))
            return ExtraOutcome(None, action)
        extra = BetExtra(bet=target, kind=kind, hand=hand, amount=amount, key=BetExtra.key_for(kind, target.pk, hand))
        self.available[target.player_id] -= amount
        self.taken[(target.pk, kind, hand)] = extra
        if target.type == "main" and self._seat_extras is not None:
            self._seat_extras.add((target.seat, kind, hand))
        self.new.append(extra)
        self.events.append(event(self.round, Kind.EXTRA_STAKE, actor=actor, actor_user=actor_user, bet=target.pk,
                                 record_id=record_id, kind=kind, hand=hand, amount=str(amount)))
        return ExtraOutcome(extra, kind)

    def _check_context(self, bet, kind, hand):
        """The extra stakes an extra depends on: a double on hand 2 needs the split; a follow needs
        the seat's own double / split on that hand (RULES 6)."""
        split = kind.replace("double", "split")
        if hand == 2 and not any((bet.pk, split, h) in self.taken for h in (1, 2)):
            raise InvalidExtra(f"no second hand: bet {bet.record_id} was not split")
        if kind.startswith("follow_"):
            seat_kind = kind.removeprefix("follow_")
            if (bet.seat, seat_kind, hand) not in self.seat_extras():
                raise InvalidExtra(f"seat {bet.seat} did not {seat_kind} (hand {hand})")

    def _check_legal(self, bet, kind, hand, cards):
        """A seat's double or split must be legal on the hand it names (RULES 4, the engine's
        ``why_illegal``): a double on two cards, not on split aces; a split of a pair, not of a split
        hand; neither on a finished hand (21). The dealer's card matters only to surrender, which
        takes no extra stake."""
        if kind not in ("double", "split"):
            return
        was_split = hand == 2 or (bet.pk, "split", 1) in self.taken
        hand_cards = [parse_card(c) for c in cards]
        reason = why_illegal(self.table.rules(), kind, hand_cards, None, split=was_split,
                             split_aces=was_split and hand_cards[0][0] == "A")
        if reason is not None:
            raise InvalidExtra(f"cards {' '.join(hand_cards)}: {reason}")

    def save(self):
        """Write the extras taken, their ledger stakes (one ``post``), the follow flags and the events."""
        if self.new:
            BetExtra.objects.bulk_create(self.new)
            house = table_house(self.table)
            post([Posting(key=x.key, kind=LedgerTransaction.Kind.STAKE, source=self.wallets[x.bet.player_id],
                          destination=house, amount=x.amount) for x in self.new])
            follows = [x for x in self.new if x.kind in ("follow_double", "follow_split")]
            for x in follows:
                setattr(x.bet, x.kind, True)
            for flag in ("follow_double", "follow_split"):
                Bet.objects.bulk_update({x.bet for x in follows if x.kind == flag}, [flag])
        RoundEvent.objects.bulk_create(self.events)


@transaction.atomic
def add_extra_stakes(*, round_id, extras, actor="", actor_user=None):
    """Take many extra stakes on round ``round_id`` (CLOSED) in one transaction, all debited in ONE
    ledger ``post``; each request stands alone, in order (a double on hand 2 may follow its split
    in the same batch). ``extras``: a list of dicts ``{"bet": record id, "kind": str, "hand": 1|2
    (default 1), "cards": [card codes] (double, split)}``, each as for ``add_extra_stake`` (same
    rules, amounts, keys, fallbacks and events). Returns one ``ExtraOutcome`` per request, in order;
    a rejected one carries ``error`` (codes ``not_found``, ``illegal_transition``, ``invalid_extra``,
    ``invalid_input``) and took nothing. Raises ``NotFound`` (round), ``IllegalTransition`` (round
    not CLOSED or cancelled)."""
    round_ = lock_round(round_id, shared=True)
    if round_.state != Round.State.CLOSED or round_.cancelled_at:
        raise IllegalTransition(f"extra stakes are taken while round {round_id} is played, not when {round_.state}")
    batch = _Extras(round_, extras)
    outcomes = []
    for request in extras:
        try:
            outcomes.append(batch.take(request, actor, actor_user))
        except WageringError as error:
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
    and nothing is debited. The same (bet, kind, hand) again returns the extra already taken.
    Ledger key ``<kind>:<bet>`` (``<kind>:<bet>:2`` for hand 2). Returns an ``ExtraOutcome``
    (``add_extra_stakes`` with one request).

    Raises ``NotFound`` (round, bet), ``IllegalTransition`` (round not CLOSED or cancelled, bet
    not ACCEPTED), ``InvalidExtra`` (kind not allowed for the bet / hand), ``InvalidInput`` (cards).
    """
    outcome = add_extra_stakes(round_id=round_id, actor=actor, actor_user=actor_user,
                               extras=[{"bet": bet, "kind": kind, "hand": hand, "cards": cards}])[0]
    if outcome.error is not None:
        raise outcome.error
    return outcome


def _score(cards):
    if not isinstance(cards, list) or not cards:
        raise InvalidInput("cards: the hand's card codes are required for a double or split")
    try:
        return score([parse_card(c) for c in cards])
    except ValueError as e:
        raise InvalidInput(f"cards: {e}") from None


@transaction.atomic
def cancel(*, round_id, reason, host_disconnected=False, actor="", actor_user=None):
    """Cancel a round still in play (OPEN, CLOSED or SUSPENDED; RULES 10): it takes no more bets
    nor moves, and is voided in the same transaction by ``settlement.services.void_round``: every
    bet refunded in full, extra stakes included.
    ``host_disconnected`` (classic, RULES 10): the whole shoe is reshuffled (its cut card is marked
    out, so the next round needs a new shoe). Returns the ``Round``. Raises ``NotFound``,
    ``IllegalTransition``."""
    round_ = lock_round(round_id)
    if round_.state not in Round.IN_PLAY or round_.cancelled_at:
        raise IllegalTransition(f"round {round_id} is {round_.state}{', cancelled' if round_.cancelled_at else ''}")
    round_.cancelled_at = timezone.now()
    round_.save(update_fields=["cancelled_at"])
    if host_disconnected and round_.table.variant == Variant.CLASSIC:
        Shoe.objects.filter(pk=round_.shoe_id).update(cut_card_out=True)
    event(round_, Kind.CANCELLED, actor=actor, actor_user=actor_user, reason=reason,
          host_disconnected=host_disconnected).save()
    from settlement.services import void_round  # settlement imports this module
    return void_round(round_id=round_.pk, reason=reason, actor=actor, actor_user=actor_user)
