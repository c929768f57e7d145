"""Placing bets (RULES 6, 8, 9): each accepted stake is debited at once, from the player's wallet
to the table's house account (ledger key ``stake:<bet>``). A premium seat bet mirrored on the
player's second seat is a bet of its own (key and record id ``<...>#mirror``).

On PostgreSQL the bulk reads and the insert of the bets with their ``bet_placed`` events are single
statements with binary array parameters (``wagering.pg``); the ORM does the same elsewhere.
"""

from dataclasses import dataclass, field
from decimal import Decimal

from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.exceptions import IdempotencyConflict, InsufficientFunds, PlatformError
from accounts.locks import lock_wallets_by_code
from accounts.models import Operator, Player
from accounts.money import amount_string, parse_amount
from accounts.operators import players_in_session
from tables.engine.seating import (
    half_stake,
    may_take_seat,
    mirrored_stakes,
    why_no_bet_behind,
    why_no_pair_bet,
    why_no_seat,
)
from tables.exceptions import InvalidInput, NotFound
from tables.locks import lock_round, lock_seats
from tables.models import Round, RoundEvent, Seat
from tables.services import event, table_houses
from tables.studios import agreed_operators
from wallets.port import Debit, Take, claims, drop_debits, open_debits, send_debits, take

from . import pg
from .exceptions import (
    BehindOwnSeat,
    BetStacked,
    BettingClosed,
    LimitExceeded,
    SeatNotAllowed,
    SeatTaken,
    SideBetUnavailable,
    wallet_refusal,
)
from .models import Bet
from .validation import check_bet_request, json_safe, well_typed

Kind = RoundEvent.Kind
MIRROR = "#mirror"
#: The suffix of a seamless stake's debit key when its premium mirror is shared (RULES 9).
SHARED = ":shared"


@dataclass
class BetOutcome:
    """What became of one bet request (index ``index`` of the list given to ``place_bets``):
    ``bets`` = the ``Bet`` and, for a premium seat bet mirrored on the player's second seat, the
    mirrored ``Bet``; ``created`` is False when the idempotency key had already placed them (no
    second debit); ``error`` is the ``PlatformError`` (with ``.code``) that rejected
    the request, in which case nothing was placed."""

    index: int
    bets: list = field(default_factory=list)
    created: bool = False
    error: Exception | None = None


class _Placement:
    """One ``place_bets`` pass: the round's context loaded once (players, locked wallets, limits,
    seats and the round's seat bets), then each request checked in turn against it, with balances
    and seats kept up to date in memory as requests are accepted. ``debits``: ``{movement key:
    WalletMovement}``, the seamless stakes' debits as their operators answered them; ``sending``:
    a pass that finds which debits to send (one not answered yet does not refuse its bet). A
    seamless player's balance is the operator's business: a premium mirror is debited in full
    and, when the operator refuses it for funds, shared (``SHARED`` debits) as RULES 9 says.
    ``claimed``: the positions the players' live stake debits hold for bets not placed yet
    (``wallets.port.claims``, read under the wallets' locks): a position a concurrent call's debit
    holds is refused as stacked, before a debit of its own is sent; at seats, every player's are
    read (under the seats' locks), and a seat another player's debit claims is taken
    (``seat_claims``: ``{seat number: player id}``). ``unsent``: ``{key: error}``
    of the requests a finding pass refused (their debits were never sent): the error they keep."""

    def __init__(self, round_, requests, debits, *, sending=False, unsent=None):
        self.round = round_
        self.debits, self.sending, self.unsent = debits, sending, unsent or {}
        self.debit_keys, self.replaced = {}, []  # {bet key: its debit's key}; full debits a shared mirror replaces
        self.table = round_.table
        self.rules = self.table.rules()
        self.minor_units = self.table.currency.minor_units
        self.closed = round_.state != Round.State.OPEN or round_.cancelled_at is not None
        self.now = timezone.now()  # the bets of one call are placed at one instant
        self.limits = {limit.bet_type: limit for limit in self.table.limits.all()}
        requests = [r for r in requests if well_typed(check_bet_request, r)]  # no bad type reaches a query
        self.seats, self.main, self.behind, self.taken = {}, {}, {}, []
        if not self.rules.shared_hand:  # seats before wallets: the lock order (tables.locks)
            self.seats = {s.number: s for s in lock_seats(self.table)}
            for bet in self.round.bets.filter(state=Bet.State.PLACED, type__in=["main", "behind"]):
                if bet.type == "main":
                    self.main[bet.seat] = bet
                else:
                    self.behind.setdefault(bet.player_id, set()).add(bet.seat)
        codes = {r.get("player") for r in requests if isinstance(r.get("player"), str)}
        self.wallets, self.players = self._wallets_and_players(codes)
        self.available = {pid: w.known_balance for pid, w in self.wallets.items()}  # None: the operator's to tell
        # read once the wallets are locked: a concurrent batch of the same player has committed
        self.positions = set(Bet.objects.filter(round=round_, player_id__in=list(self.wallets))
                             .values_list("player_id", "type", "seat"))
        journals = [pid for pid, w in self.wallets.items() if w.journal]
        # at seats, every player's: a seat one player's live debit claims is taken for the others
        self.claimed = claims(str(round_.pk), None if self.seats else journals) if journals or self.seats else {}
        self.seat_claims = {int(c.removeprefix("main:")): pid for pid, c in self.claimed
                            if c.startswith("main:") and c != "main:"}
        keys = {r.get("key") for r in requests if isinstance(r.get("key"), str)}
        record_ids = {i for i in (r.get("record_id") or r.get("key") for r in requests) if isinstance(i, str)}
        if (self.rules.seats_per_player or 1) > 1:  # premium: a mirrored seat bet has a key and record id of its own
            keys |= {k + MIRROR for k in keys}
            record_ids |= {i + MIRROR for i in record_ids}
        if connection.vendor == "postgresql":
            known = pg.known_bets(round_, keys, record_ids)
        else:
            known = Bet.objects.filter(Q(table_id=self.table.pk, idempotency_key__in=keys)
                                       | Q(round=round_, record_id__in=record_ids))
        self.existing, self.record_ids = {}, set()
        for bet in known:  # one query for both: the table's keys already placed, the record ids already used
            if bet.table_id == self.table.pk and bet.idempotency_key in keys:
                self.existing[bet.idempotency_key] = bet
            if bet.round_id == round_.pk and bet.record_id in record_ids:
                self.record_ids.add(bet.record_id)

    def _wallets_and_players(self, codes):
        """``({player_id: locked wallet}, {code: Player})`` of the players the game codes ``codes``
        name who hold a live session in the table currency (``accounts.operators.players_in_session``:
        their operator lets them play now; a session in a currency comes with a wallet in it) and
        whose operator has an agreement with the table's studio (``tables.studios.agreed_operators``).
        Any other code, unknown or not, is no player for the game server: one answer for all."""
        wallets = {w.player_id: w for w in lock_wallets_by_code(self.table.currency, codes)}
        allowed = stakers(self.table, wallets)
        wallets = {pid: w for pid, w in wallets.items() if pid in allowed}
        return wallets, {w.player.game_code: w.player for w in wallets.values()}

    # -- one request ------------------------------------------------------------------------------

    def check(self, request):
        """Check one request and return the unsaved ``Bet`` rows it places (or the existing ones for
        a repeated key). Raises the error that rejects it."""
        key, bet_type, seat_no = request.get("key"), request.get("type"), request.get("seat")
        if not isinstance(key, str) or not key or len(key) > 120:
            raise InvalidInput("key: a non-empty string of at most 120 characters is required")
        record_id = request.get("record_id") or key
        if key in self.existing:  # its money moved: the player need not be able to stake now
            return self._replay(key, request.get("player"), bet_type, seat_no,
                                parse_amount(request.get("stake"), self.minor_units), record_id)
        player = self.players.get(request.get("player"))
        if player is None:
            raise NotFound(no_player(request.get("player"), self.table.currency_id))
        stake = parse_amount(request.get("stake"), self.minor_units)
        if self.closed:
            raise BettingClosed(f"betting on round {self.round.pk} is closed ({self.round.state})")
        if bet_type not in self.rules.bet_types:
            raise SideBetUnavailable(f"{self.table.variant} tables take no {bet_type!r} bets")
        if not self.rules.offered(bet_type, self.round.shoe_round):
            raise SideBetUnavailable(f"{bet_type} is offered up to shoe round "
                                     f"{self.rules.last_shoe_round[bet_type]}; this is round {self.round.shoe_round}")
        self._check_limits(bet_type, stake)
        if not isinstance(record_id, str):
            raise IdempotencyConflict(f"record id {record_id!r} is no string")
        placements = self._placements(player, bet_type, seat_no, stake, record_id)
        for i, (seat, _) in enumerate(placements):
            held = self.claimed.get((player.pk, claim(bet_type, seat)), "").removesuffix(SHARED)
            if (player.pk, bet_type, seat) in self.positions \
                    or held not in ("", debit_key(self.round, record_id + MIRROR * i)):
                where = f"seat {seat}" if seat is not None else "this round"
                raise BetStacked(f"player {player.game_code} already has a {bet_type} bet on {where}: "
                                 "one bet per player, position and bet type in a round")
        total = sum(s for _, s in placements)
        wallet = self.wallets[player.pk]
        if self.available[player.pk] is not None and self.available[player.pk] < total:
            raise InsufficientFunds(f"the player's wallet cannot cover the stake of {self._shown(total)}")
        for i, (seat, _) in enumerate(placements):  # a premium mirror's ids are taken like the bet's own
            what = f"record id {record_id + MIRROR * i!r}" + (f" of the mirrored bet on seat {seat}" if i else "")
            if record_id + MIRROR * i in self.record_ids:
                raise IdempotencyConflict(f"{what} is already used in round {self.round.pk}")
            if i and key + MIRROR * i in self.existing:
                raise IdempotencyConflict(f"key {key + MIRROR * i!r} of the mirrored bet on seat {seat} is already "
                                          "used by another bet")
        if wallet.journal:
            shared = placements[0][1] != stake  # RULES 9: the operator could not cover the full mirror
            for i in range(len(placements)):
                movement = debit_key(self.round, record_id + MIRROR * i) + (SHARED if shared else "")
                self._debited(movement, key)
                self.debit_keys[key + MIRROR * i] = movement
            if shared:
                self.replaced += [debit_key(self.round, record_id + MIRROR * i) for i in range(len(placements))]
        # table and currency set here, not left to CopiedForeignKey: wagering.pg inserts without the ORM
        bets = [Bet(round=self.round, table_id=self.table.pk, currency_id=self.table.currency_id, player=player,
                    type=bet_type, seat=n, stake=s, idempotency_key=key + MIRROR * i, record_id=record_id + MIRROR * i,
                    placed_at=self.now)
                for i, (n, s) in enumerate(placements)]
        self._accept(player, bets)
        return bets

    def _debited(self, key, request_key):
        """Raise the refusal of the seamless stake debit ``key`` (of request ``request_key``) unless
        its operator answered OK (or, in a pass that finds the debits to send, it is not sent yet);
        one never sent keeps the refusal of the pass that did not send it."""
        movement = self.debits.get(key)
        if movement is None and self.sending:
            return
        if movement is None and request_key in self.unsent:
            raise self.unsent[request_key]
        if movement is None or movement.state != movement.State.OK:
            raise wallet_refusal(getattr(movement, "status", ""))

    def _replay(self, key, code, bet_type, seat_no, stake, record_id):
        """The bet(s) key ``key`` placed, when the request (player game ``code``, type, seat,
        stake, record id) is the one that placed them; else ``IdempotencyConflict``."""
        bet, mirror = self.existing[key], self.existing.get(key + MIRROR)
        stakes = {stake} if mirror is None else {stake, half_stake(stake, self._step(bet_type))}
        player = self.players.get(code)  # not there once the player may not stake: compare the bet's own code
        same_player = bet.player_id == player.pk if player is not None else bet.player.game_code == code
        if (bet.round_id, bet.type, bet.seat, bet.record_id) != (self.round.pk, bet_type, seat_no, record_id) \
                or not same_player or bet.stake not in stakes:
            raise IdempotencyConflict(f"key {key!r} already placed a different bet")
        return [bet] if mirror is None else [bet, mirror]

    def _step(self, bet_type):
        limit = self.limits.get(bet_type)
        return limit.chip_step if limit else Decimal(1).scaleb(-self.minor_units)

    def _shown(self, amount):
        return amount_string(amount, self.minor_units)

    def _check_limits(self, bet_type, stake):
        """The table's limits of ``bet_type`` on one bet (one per player, position and bet type:
        ``BetStacked``); ``LimitExceeded`` naming them in the currency's minor units."""
        limit = self.limits.get(bet_type)
        if limit is None:
            return
        if not limit.min_stake <= stake <= limit.max_stake:
            raise LimitExceeded(f"{bet_type} stakes are {self._shown(limit.min_stake)} to "
                                f"{self._shown(limit.max_stake)}, not {self._shown(stake)}")
        if stake % limit.chip_step:
            raise LimitExceeded(f"{bet_type} stakes are multiples of {self._shown(limit.chip_step)}, "
                                f"not {self._shown(stake)}")

    def _placements(self, player, bet_type, seat_no, stake, record_id):
        """``[(seat number or None, stake)]`` the request places, by the seat rules (RULES 6, 9)."""
        if self.rules.shared_hand:
            if seat_no is not None:
                raise SeatNotAllowed(f"{self.table.variant} tables have no seats")
            return [(None, stake)]
        seat = self.seats.get(seat_no)
        if seat is None:
            raise SeatNotAllowed(f"a {bet_type} bet needs a seat 1-{len(self.seats)}, not {seat_no!r}")
        if bet_type == "main":
            return self._seat_bet(player, seat, stake, record_id)
        if seat.player_id is None:
            raise SeatNotAllowed(f"seat {seat.number} is empty: {bet_type} bets go on occupied seats only")
        own_seat = seat.player_id == player.pk
        if bet_type == "behind":
            reason = why_no_bet_behind(self.rules, own_seat=own_seat, seats_held=len(self._held(player)))
            if reason is not None:
                raise BehindOwnSeat(f"player {player.game_code} on seat {seat.number}: {reason}")
        elif (reason := why_no_pair_bet(bet_type, own_seat=own_seat,
                                        behind_seat=seat.number in self.behind.get(player.pk, ()))) is not None:
            raise SeatNotAllowed(f"player {player.game_code} on seat {seat.number}: {reason}")
        return [(seat.number, stake)]

    def _held(self, player, but=None):
        return [s for s in self.seats.values() if s.player_id == player.pk and s is not but]

    def _seat_bet(self, player, seat, stake, record_id):
        """A seat (main) bet: RULES 9 seats, premium mirroring (the engine's ``seating``)."""
        if not may_take_seat(trial=player.account_kind == Player.Kind.TRIAL,
                             play_for_fun=self.table.currency.play_for_fun):
            raise SeatNotAllowed(f"player {player.game_code}'s account or currency never takes a seat")
        if seat.player_id not in (None, player.pk):
            raise SeatTaken(f"seat {seat.number} is taken by another player")
        if seat.number in self.main:
            raise SeatTaken(f"seat {seat.number} already has a seat bet this round")
        if self.seat_claims.get(seat.number, player.pk) != player.pk:
            raise SeatTaken(f"seat {seat.number} is being taken by another player's bet this round")
        held = self._held(player, but=seat)
        if seat.player_id is None:
            behind = self.behind.get(player.pk, set())
            if seat.number in behind:
                reason = why_no_bet_behind(self.rules, own_seat=True, seats_held=len(held))
                raise BehindOwnSeat(f"player {player.game_code} bets behind seat {seat.number}: {reason}")
            if (reason := why_no_seat(self.rules, seats_held=len(held), behind_any=bool(behind))) is not None:
                raise SeatNotAllowed(f"player {player.game_code}: {reason}")
        placements = [(seat.number, stake)]
        for other in held:
            if other.number in self.main:
                if self.main[other.number].stake != stake:
                    raise SeatNotAllowed(f"stakes on a player's two seats must be equal "
                                         f"({self.main[other.number].stake} on seat {other.number})")
            else:
                mine, theirs = self._mirrored(stake, available=self._covering(player, record_id))
                placements = [(seat.number, mine), (other.number, theirs)]
        return placements

    def _covering(self, player, record_id):
        """The balance a premium mirror's decision reads (RULES 9): a transfer player's; for a
        seamless player None (the full mirror is asked of the operator's wallet), or 0 once the
        operator refused one of the two full debits for funds (the stake is then shared)."""
        if self.available[player.pk] is not None:
            return self.available[player.pk]
        full = [self.debits.get(debit_key(self.round, record_id + MIRROR * i)) for i in (0, 1)]
        return Decimal(0) if any(getattr(m, "status", "") == "INSUFFICIENT_FUNDS" for m in full) else None

    def _mirrored(self, stake, *, available):
        """The two seats' stakes of a premium seat bet of ``stake`` (``seating.mirrored_stakes``);
        ``LimitExceeded`` when half of it is below the minimum."""
        limit = self.limits.get("main")
        try:
            return mirrored_stakes(stake, available=available, step=self._step("main"),
                                   minimum=limit.min_stake if limit else None)
        except ValueError as e:
            raise LimitExceeded(str(e)) from None

    def _accept(self, player, bets):
        if self.available[player.pk] is not None:
            self.available[player.pk] -= sum(b.stake for b in bets)
        for bet in bets:
            self.positions.add((player.pk, bet.type, bet.seat))
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


def place_bets(*, round_id, bets, actor="", actor_user=None, amounts_as_strings=False):
    """Place many bets on round ``round_id``; each request stands alone.

    ``bets``: a list of dicts ``{"key": str (the game server's idempotency key), "player": the
    player's game code, "type": Bet.Type, "stake": decimal string or Decimal, "seat": int or None,
    "record_id": str or None (the bet's id in the round record; default the key)}``. Every accepted
    stake is taken at once through the wallet port: a transfer player's from the platform's
    wallet (ledger ``stake:<bet>``, all in one posting), a seamless player's by a debit of its
    operator's wallet first (all the batch's debits at once), the bet placed only once the debit
    answered OK; a premium mirror the operator refuses for funds is shared (RULES 9), its full
    debits undone first; every debit answered OK whose bet is not placed, whatever the reason (the
    call raising included), is rolled back before this returns or raises. The rules: only a
    player with a live session in the table currency (minted by the player's operator:
    ``accounts.operators.players_in_session``) whose operator has an agreement with the table's
    studio (``tables.models.StudioAgreement``) bets; any other code, known or not, is
    ``not_found`` with one sentence. RULES 8 (types offered, shoe-round limits), the
    table's limits on each bet, one bet per player, position (seat, or the shared hand) and bet
    type in a round (RULES 6, 7, 8: ``bet_stacked``; a position a concurrent call's stake debit
    holds, sent and its bet not placed yet, is ``bet_stacked`` too, and its own debit never
    sent), RULES 6 and 9 (seats, behind, mirrors). A
    key seen before at the round's table returns its bet(s) with ``created=False`` and no second
    debit, whether or not its player may stake now (the rules above are a new bet's); the same key
    with another body (player, type, seat, stake, record id) is rejected with
    ``idempotency_conflict``. Keys are the
    table's (one studio's): another table's, another studio's above all, are never looked at.

    Returns a ``BetOutcome`` per request, in order; rejected requests carry ``error`` (codes:
    ``betting_closed``, ``not_found``, ``invalid_amount``, ``insufficient_funds`` (never with the
    balance), ``limit_exceeded``, ``bet_stacked``, ``seat_taken``, ``seat_not_allowed``, ``behind_own_seat``,
    ``side_bet_unavailable``, ``idempotency_conflict``, ``invalid_input``, and for seamless
    players ``player_blocked`` and ``wallet_unavailable``) and a ``bet_rejected`` event. Raises
    ``NotFound`` for an unknown round. Each request's field types are checked first
    (``wagering.validation.check_bet_request``; ``amounts_as_strings``: the API, stakes must be strings).
    """
    if not _seamless_players_in(bets):
        return _place(round_id, bets, None, {}, actor, actor_user, amounts_as_strings)
    opened, _, unsent = _open_debits(round_id, bets, amounts_as_strings, {})
    debits = send_debits(opened.values())
    try:
        if any(m.status == "INSUFFICIENT_FUNDS" for m in debits.values()):  # a mirror shared (RULES 9)?
            shared, replaced, unsent = _open_debits(round_id, bets, amounts_as_strings, debits)
            drop_debits([debits[k] for k in replaced if k in debits], now=True)  # their funds free first
            debits.update(send_debits(shared.values()))
        return _place(round_id, bets, debits, unsent, actor, actor_user, amounts_as_strings)
    finally:  # placed or not, raised or not: a debit answered OK without its bet is rolled back now
        drop_debits(debits.values())


def no_player(code, currency):
    """The sentence of ``not_found`` for a player game ``code`` who may not stake in ``currency``
    now (unknown, no live session, or an operator without an agreement with the studio)."""
    return f"no player {code!r} in a live session in {currency}"


def stakers(table, wallets):
    """The ids (a set) of the players of ``wallets`` (``{player id: wallet Account}`` in
    ``table``'s currency) who may stake new money at ``table`` now: a live session in its currency
    (``accounts.operators.players_in_session``: their operator lets them play) and an operator with
    an agreement with its studio (``tables.studios.agreed_operators``)."""
    live = players_in_session(wallets, table.currency_id)
    agreed = agreed_operators(table.studio_id, {wallets[pid].operator_id for pid in live})
    return {pid for pid in live if wallets[pid].operator_id in agreed}


def claim(bet_type, seat):
    """The claim a seamless stake's debit holds for its bet's position: ``<type>:<seat>``
    (``<type>:`` on the shared hand)."""
    return f"{bet_type}:{'' if seat is None else seat}"


def debit_key(round_, record_id):
    """The key of the debit of a seamless stake: ``stake:<round>:<record id>`` (known before the bet is)."""
    return f"stake:{round_.pk}:{record_id}"


def _seamless_players_in(requests):
    """True when a request of ``requests`` names a player of a seamless operator."""
    seamless = list(Operator.objects.filter(wallet_mode=Operator.WalletMode.SEAMLESS).values_list("pk", flat=True))
    codes = {r.get("player") for r in requests if isinstance(r, dict) and isinstance(r.get("player"), str)}
    return bool(seamless and codes) and Player.objects.filter(game_code__in=codes, operator__in=seamless).exists()


@transaction.atomic(durable=True)
def _open_debits(round_id, requests, amounts_as_strings, debits):
    """A pass that finds which requests would place bets, given the ``debits`` answered so far,
    and records the debits of their seamless stakes not sent yet, each claiming its bet's position
    (``claim``), committed before any is sent. Returns ``({key: WalletMovement} of those, [keys of
    the full debits that shared mirrors replace], {key: error} of the requests refused)``."""
    round_ = lock_round(round_id, shared=True)
    placement = _Placement(round_, requests, debits, sending=True)
    new, refused = [], {}
    for request in requests:
        try:
            check_bet_request(request, amounts_as_strings=amounts_as_strings)
            fresh = request["key"] not in placement.existing
            placed = placement.check(request)
        except PlatformError as error:
            if isinstance(request, dict) and isinstance(request.get("key"), str):
                refused[request["key"]] = error
            continue
        wallet = placement.wallets.get(placed[0].player_id)
        if fresh and wallet.journal:
            new += [Debit(key=placement.debit_keys[b.idempotency_key], kind="stake", wallet=wallet, amount=b.stake,
                          round_ref=str(round_.pk), table_ref=round_.table.code, claim=claim(b.type, b.seat))
                    for b in placed if placement.debit_keys[b.idempotency_key] not in debits]
    return open_debits(new), placement.replaced, refused


@transaction.atomic
def _place(round_id, bets, debits, unsent, actor, actor_user, amounts_as_strings):
    """The pass that places: see ``place_bets`` (``unsent``: ``_open_debits``'s refusals)."""
    round_ = lock_round(round_id, shared=True)
    placement = _Placement(round_, bets, debits or {}, unsent=unsent)
    outcomes, new, events = [], [], []
    for index, request in enumerate(bets):
        outcome = BetOutcome(index)
        try:
            check_bet_request(request, amounts_as_strings=amounts_as_strings)
            fresh = not isinstance(request.get("key"), str) or request["key"] not in placement.existing
            outcome.bets = placement.check(request)
            outcome.created = fresh
        except PlatformError as error:
            outcome.error = error
            events.append(event(round_, Kind.BET_REJECTED, actor=actor, actor_user=actor_user,
                                request={json_safe(k): json_safe(v) for k, v in list(request.items())[:16]}
                                if isinstance(request, dict) else None,
                                code=error.code, detail=str(error)))
        if outcome.created:
            new += outcome.bets
        outcomes.append(outcome)
    events += [event(round_, Kind.SEATED, actor=actor, actor_user=actor_user, seat=s.number,
                     player=s.player.game_code) for s in placement.taken]
    RoundEvent.objects.bulk_create(events, batch_size=2000)
    if new:
        try:  # no savepoint of its own: the error leaves place_bets, whose transaction rolls back
            _insert_bets(round_, new, actor=actor, actor_user=actor_user)
        except IntegrityError:  # a concurrent request used one of these keys for another player
            raise IdempotencyConflict("an idempotency key or record id of this batch was used concurrently") from None
        wallets = placement.wallets
        houses = table_houses(round_.table, [wallets[b.player_id] for b in new])
        take([Take(key=b.stake_key(), wallet=wallets[b.player_id], house=houses[wallets[b.player_id].operator_id],
                   amount=b.stake, debit=placement.debit_keys.get(b.idempotency_key))
              for b in new])
        Seat.objects.bulk_update(placement.taken, ["player"])
    return outcomes


def _insert_bets(round_, bets, *, actor, actor_user):
    """Insert ``bets`` (unsaved ``Bet`` rows of ``round_``; they get their pks) and then one
    ``bet_placed`` event per bet, in order. PostgreSQL: one statement (``wagering.pg``); elsewhere
    the ORM. Raises ``IntegrityError`` if an idempotency key or record id is taken."""
    minor_units = round_.table.currency.minor_units
    payloads = [{"record_id": b.record_id, "player": b.player.game_code, "type": b.type, "seat": b.seat,
                 "stake": amount_string(b.stake, minor_units)} for b in bets]
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
