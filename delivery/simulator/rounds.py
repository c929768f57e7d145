"""One table's game server: deals round after round through the platform's services.

A round: ``open_round`` (with the shoe's sequence and burn) → ``place_bets`` (seat bets, then
behind and side bets) → ``close_betting`` → deal and play with the engine's ``RoundPlay`` (extra
stakes taken at decision time, ``decisions``) → ``record_result`` (or a fault, ``faults``).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from settlement.results import record_result
from settlement.tasks import settle_round
from settlement.voids import cancel
from tables.cards import record_cards
from tables.engine.play import RoundPlay
from tables.models import Seat, Shoe
from tables.services import open_round, resume, suspend
from wagering.closing import close_betting
from wagering.exceptions import SeatNotAllowed
from wagering.models import Bet
from wagering.placement import place_bets

from . import faults
from .betting import BetMaker
from .calls import call
from .decisions import DecisionStats, InitialDeal, RoundDecisions
from .scanner import Scanner
from .settling import correct_misreads
from .shoes import TableShoe


@dataclass
class RunStats:
    """What the game servers saw across a run: ``rounds`` (platform round ids), ``faults``
    (``{kind: [round ids]}``), ``misreads`` (``[(round id, correct record)]``), ``resettled``
    (how many of them were corrected),
    ``refusals`` (``[(table code, player code, account kind, reason)]``: seats refused),
    ``rejected`` (``{error code: n}``), ``decisions`` (``DecisionStats``)."""

    rounds: list = field(default_factory=list)
    faults: dict = field(default_factory=dict)
    misreads: list = field(default_factory=list)
    resettled: int = 0
    refusals: list = field(default_factory=list)
    rejected: dict = field(default_factory=dict)
    decisions: DecisionStats = field(default_factory=DecisionStats)

#: Bets per ``place_bets`` call (the game server's batch while betting is open).
PLACE_BATCH = 500


#: What ``_record_bet`` reads of a bet (plain rows: a boundless round holds tens of thousands).
RECORD_BET_FIELDS = ("record_id", "player__game_code", "type", "stake", "seat")


def _record_bet(record_id, player, type_, stake, seat, minor_units: int) -> dict:
    """A platform bet (its ``RECORD_BET_FIELDS``) as a round-record bet (flags false until the
    extra stake is taken)."""
    d = {"id": record_id, "player": player, "type": type_, "stake": f"{stake:.{minor_units}f}"}
    if seat is not None:
        d["seat"] = seat
    if type_ in ("main", "behind"):
        d["insurance"] = False
    if type_ == "behind":
        d["follow_double"] = d["follow_split"] = False
    return d


class TableGame:
    """The game server of one demo ``table``.

    Args: ``table`` (a ``Table``), ``players`` (its ``DemoPlayer`` list), ``config`` (``SimConfig``),
    ``rng`` (the table's own ``random.Random``), ``stats`` (the run's ``RunStats``), ``first_round``
    (number of the table's first round this run, for unique external ids).
    """

    def __init__(self, table, players, config, rng: random.Random, stats: RunStats, first_round: int):
        self.table, self.config, self.rng, self.stats = table, config, rng, stats
        self.rules = table.rules()
        self.minor_units = table.currency.minor_units
        self.kind = {p.code: p.kind for p in players}
        self.bets = BetMaker(table, self.rules, {lim.bet_type: lim for lim in table.limits.all()}, players, rng)
        last_shoe = Shoe.objects.filter(table=table).order_by("-sequence").values_list("sequence", flat=True).first()
        self.shoe = TableShoe(rng, table.penetration, (last_shoe or 0) + 1)
        self.start = self.number = first_round
        self.uncorrected: list = []

    def correct_misreads(self, timeout: float) -> None:
        """Have the table's misread rounds resettled with their correct records once settled
        (``settling.correct_misreads``, waiting up to ``timeout`` seconds): before the table deals
        on, so that its shoe counts the cards really dealt, not the ones misread (``tables.cards``)."""
        left = correct_misreads(self.uncorrected, timeout)
        self.stats.resettled += len(self.uncorrected) - len(left)
        self.uncorrected = left

    def play_round(self) -> int:
        """Deal one round (once the table's misread rounds are corrected); returns its platform id."""
        self.correct_misreads(self.config.settle_timeout)
        self.number += 1
        self.shoe.set_drift(self.number - self.start <= self.config.drift_rounds)
        sequence, burn, shoe_round = self.shoe.begin_round()
        round_ = call(open_round, table_code=self.table.code, external_id=f"R{self.number:06d}", shoe=sequence,
                      burn_count=burn)
        if round_.shoe_round != shoe_round:
            raise RuntimeError(f"{round_}: the platform counts shoe round {round_.shoe_round}, the shoe {shoe_round}")
        self.stats.rounds.append(round_.pk)
        fault = faults.pick(self.rng, self.config.fault_rate)
        if fault:
            self.stats.faults.setdefault(fault, []).append(round_.pk)
        self.bets.start(round_.external_id)
        if self.rules.shared_hand:
            self._place(round_, self.bets.boundless_bets(shoe_round))
        else:
            self._seat_and_bet(round_, shoe_round)
        call(close_betting, round_id=round_.pk)
        if fault == "suspend":
            call(suspend, round_id=round_.pk, reason="simulated fault: card scanner offline")
            call(resume, round_id=round_.pk)
        misread = (lambda card: faults.misread_card(card, self.rng, self.shoe.out())) if fault == "misread" else None
        scanner = Scanner(round_.pk, misread)
        record = self._play(round_, scanner)
        scanner.report(record_cards(record))
        sent = scanner.as_read(record)
        cut_card_out = self.shoe.end_round(round_.pk)
        if fault == "cancel":
            self._cancel(round_, cut_card_out)
        else:
            call(record_result, round_id=round_.pk, record=sent, cut_card_out=cut_card_out)
            if fault == "misread":
                self.stats.misreads.append((round_.pk, record))
                self.uncorrected.append((round_.pk, record))
        if fault == "duplicate":
            settle_round.delay(round_.pk)
        return round_.pk

    def _place(self, round_, requests: list) -> list:
        """``place_bets`` for ``requests`` in batches of ``PLACE_BATCH`` (as a studio forwards bets
        while the betting window is open: one huge batch would hold all its wallets locked at once,
        and the previous round's settlement would wait on them); rejections are counted by error
        code."""
        outcomes = [outcome for start in range(0, len(requests), PLACE_BATCH)
                    for outcome in call(place_bets, round_id=round_.pk, bets=requests[start:start + PLACE_BATCH])]
        for outcome in outcomes:
            if outcome.error is not None:
                self.stats.rejected[outcome.error.code] = self.stats.rejected.get(outcome.error.code, 0) + 1
        return outcomes

    def _seat_and_bet(self, round_, shoe_round: int) -> None:
        """Classic/premium betting: seat bets first; players refused a seat (trial and play-for-fun
        accounts, RULES 9) then bet behind with the others, and side bets go on occupied seats."""
        seats = dict(Seat.objects.filter(table=self.table).values_list("number", "player__game_code"))
        requests = self.bets.seat_bets(seats)
        refused, occupied = [], {}
        for request, outcome in zip(requests, self._place(round_, requests)):
            if isinstance(outcome.error, SeatNotAllowed):
                refused.append(request["player"])
                self.stats.refusals.append((self.table.code, request["player"], self.kind[request["player"]],
                                            str(outcome.error)))
            occupied.update({b.seat: request["player"] for b in outcome.bets})
        seated = set(Seat.objects.filter(table=self.table, player__isnull=False)
                     .values_list("player__game_code", flat=True))
        self._place(round_, self.bets.behind_and_side_bets(occupied, seated, refused, shoe_round))

    def _play(self, round_, scanner: Scanner) -> dict:
        """Deal and play the CLOSED round from the table's shoe, its cards scanned by ``scanner``
        when a decision needs them; returns its round record."""
        bets = [_record_bet(*row, self.minor_units) for row in Bet.objects.filter(
            round=round_, state=Bet.State.ACCEPTED).order_by("pk").values_list(*RECORD_BET_FIELDS)]
        decisions = RoundDecisions(round_.pk, self.rng, self.config.deviate, self.config.timeout,
                                   self.stats.decisions, scanner)
        if self.rules.shared_hand:
            initial, up_index = 4, 1
        else:
            seats = len({b["seat"] for b in bets if b["type"] == "main"})
            initial, up_index = 2 * seats + (2 if self.rules.hole_card else 1), seats
        deal = InitialDeal(self.shoe, initial, up_index, decisions.offer_insurance)
        play = RoundPlay(self.rules, deal, bets, decide=decisions.decide, can_afford_all=decisions.can_afford_all,
                         round_id=round_.external_id, currency=self.table.currency_id, shoe_round=round_.shoe_round)
        decisions.attach(play.bets, play.dealt, deal)
        record = play.play()
        deal.close()
        return record

    def _cancel(self, round_, cut_card_out: bool) -> None:
        """Suspend, then cancel (void) the round; a classic host disconnection reshuffles the shoe."""
        host = faults.host_disconnects(self.rng, self.table.rules())
        reason = "simulated fault: host system disconnected" if host else "simulated fault: unresolved dealing error"
        call(suspend, round_id=round_.pk, reason=reason)
        call(cancel, round_id=round_.pk, reason=reason, host_disconnected=host)
        if host and not cut_card_out:
            self.shoe.reshuffle()
