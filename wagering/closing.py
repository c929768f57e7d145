"""Closing betting (RULES 3, 6, 9: seats emptied, players unseated) and refunding bets in full
(RULES 10: a stake and every extra stake back, ledger keys ``refund:<bet>`` and
``refund:<extra key>``)."""

from decimal import Decimal

from django.db import transaction
from django.db.models import F, OuterRef, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import LedgerTransaction
from accounts.money import amount_string
from tables.engine.seating import seats_emptied, unseated_after
from tables.locks import lock_round, lock_seats
from tables.models import Round, RoundEvent
from tables.money import bet_move, round_money
from tables.services import event, unseat
from wallets.port import move

from . import rollups
from .models import Bet, BetExtra

Kind = RoundEvent.Kind


def refund_bets(round_, bets, *, actor="", actor_user=None):
    """Refund ``bets`` (a ``Bet`` list, extras prefetched) of ``round_`` (a locked ``Round``) in full,
    stake and every extra stake (``refund:<bet>``, ``refund:<kind>:<bet>``; RULES 10), mark them
    REFUNDED with outcome ``void`` and ``returned`` = everything they staked (a settled bet's earlier
    return is replaced: its reversal is posted by settlement). Returns ``(events, posted)``: one
    unsaved ``bet_refunded`` event per bet, and the refunds' ``[(wallet, LedgerTransaction)]``
    (``wallets.port.move``). Used by ``close_betting`` (seat emptied) and by ``settlement.voids``
    (a cancelled or voided round)."""
    if not bets:
        return [], []
    wallets, houses = round_money(round_, {b.player_id for b in bets})
    moves = []
    for bet in bets:
        for key, amount in ((bet.refund_key(), bet.stake), *((x.refund_key(), x.amount) for x in bet.extras.all())):
            moves.append(bet_move(round_, wallets, houses, key=key, group="refund", kind="refund",
                                  ledger_kind=LedgerTransaction.Kind.REFUND, player=bet.player_id, amount=amount,
                                  bet=bet.pk))
    posted = move(moves)
    extras = BetExtra.objects.filter(bet=OuterRef("pk")).values("bet").annotate(total=Sum("amount")).values("total")
    Bet.objects.filter(pk__in=[b.pk for b in bets]).update(  # a void's return is everything staked back
        state=Bet.State.REFUNDED, outcome="void", returned=F("stake") + Coalesce(Subquery(extras), Decimal(0)),
        settled_at=timezone.now())
    return [event(round_, Kind.BET_REFUNDED, actor=actor, actor_user=actor_user, bet=b.pk, record_id=b.record_id,
                  refunded=amount_string(b.stake + sum((x.amount for x in b.extras.all()), Decimal(0)),
                                         round_.table.currency.minor_units)) for b in bets], posted


@transaction.atomic
def close_betting(*, round_id, actor="", actor_user=None):
    """Close betting on an OPEN round (RULES 3, 6, 9): the round becomes CLOSED, its bets ACCEPTED.
    Seated variants: a seat without a seat bet has its behind and pair(s) bets refunded
    (``seat_emptied``); its occupant keeps it for this one round (grace) and is unseated after a
    second round in a row without a seat bet; the ``betting_closed`` event names the seats holding a
    seat bet (``seats``: the only ones cards are dealt to). The rollups count the refunds and the round's
    players (``wagering.rollups``). Returns the ``Round``. Raises ``NotFound``,
    ``IllegalTransition``."""
    round_ = lock_round(round_id)
    round_.transition(Round.State.CLOSED)
    round_.save(update_fields=["state", "closed_at"])
    events, orphans, seats = [], [], {}
    rules = round_.rules()
    if not rules.shared_hand:
        bets = list(round_.bets.filter(state=Bet.State.PLACED).prefetch_related("extras"))
        seated = {b.seat for b in bets if b.type == "main"}
        seats = {"seats": sorted(seated)}  # the seats dealt to (tables.cards.check_scan)
        emptied = seats_emptied(rules, seats_with_bets={b.seat for b in bets}, seats_with_seat_bet=seated)
        for seat in lock_seats(round_.table):
            if seat.number in seated:
                if seat.rounds_without_bet:
                    seat.rounds_without_bet = 0
                    seat.save(update_fields=["rounds_without_bet"])
                continue
            on_seat = [b for b in bets if b.seat == seat.number] if seat.number in emptied else []
            orphans += on_seat
            if on_seat or seat.player_id:
                events.append(event(round_, Kind.SEAT_EMPTIED, actor=actor, actor_user=actor_user, seat=seat.number,
                                    player=seat.player_id, refunded=[b.pk for b in on_seat]))
            if seat.player_id:
                seat.rounds_without_bet += 1
                if unseated_after(rules, seat.rounds_without_bet):
                    events.append(unseat(seat, round_, "two rounds without a seat bet", actor=actor,
                                         actor_user=actor_user))
                else:
                    seat.save(update_fields=["rounds_without_bet"])
        events += refund_bets(round_, orphans, actor=actor, actor_user=actor_user)[0]
    accepted = round_.bets.filter(state=Bet.State.PLACED).update(state=Bet.State.ACCEPTED)
    events.insert(0, event(round_, Kind.BETTING_CLOSED, actor=actor, actor_user=actor_user,
                           accepted=accepted, refunded=len(orphans), **seats))
    RoundEvent.objects.bulk_create(events)
    if orphans:
        rollups.record(rollups.figures_of(Bet.objects.filter(pk__in=[b.pk for b in orphans])))
    rollups.players_of(round_)
    return round_
