"""A round's settlement as the engine computes it (a ``Plan``), kept from the moment its record is
taken until the round is settled. ``results.record_result`` checks the record with the engine
anyway (``wagering.records.check_record``) and keeps what it found (``keep``), in the transaction
that makes the round RESULTED; the worker's ``services.settle_round`` takes it (``taken``) and
writes it in the transaction that makes the round SETTLED, without reading the record or running
the engine again. So a plan exists exactly while its round is RESULTED: taken by the settlement,
or dropped by a void (``forget``). A resettle computes its own (``plan_of``). Money is ``Decimal``
in the table currency's major units.

A plan holds, per distinct kind of bet (``settlement.details``: the many bets of a boundless
round fall into few), the detail settlement stores, the outcome and the return; and per bet its
pk, its player and its kind.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass
from decimal import Decimal

from .details import distinct_details
from .models import PendingSettlement


@dataclass(frozen=True)
class Plan:
    """``bets`` (pks, in the record's order), ``players`` (their player ids), ``kinds`` (each
    bet's index into ``details``), ``details`` (``[(detail dict, outcome, returned)]``) and the
    round's ``staked`` and ``returned`` totals."""

    bets: list
    players: list
    kinds: list
    details: list
    staked: Decimal
    returned: Decimal

    def paid(self):
        """``[(bet pk, player id, returned)]`` of the bets with a return, in the record's order."""
        details = self.details
        return [(pk, player, details[kind][2]) for pk, player, kind in zip(self.bets, self.players, self.kinds)
                if details[kind][2]]

    def bets_of(self):
        """``{player id: [bet pks]}`` of every player with a bet in the plan."""
        bets = defaultdict(list)
        for pk, player in zip(self.bets, self.players):
            bets[player].append(pk)
        return dict(bets)

    def counted(self, operators):
        """``[(operator id, detail, returned, n)]``: the plan's bets grouped by their player's
        operator (``operators``: ``{player id: operator id}``) and by kind, ``n`` bets each, as
        ``wagering.rollups.round_settled`` counts them."""
        details = self.details
        groups = Counter(zip(map(operators.__getitem__, self.players), self.kinds))
        return [(operator, details[kind][0], details[kind][2], n) for (operator, kind), n in groups.items()]


def plan_of(result, bets):
    """The ``Plan`` of ``result`` (the engine's ``RoundResult``) for ``bets`` (``{record_id: (bet
    pk, player id)}`` holding every bet the record settles, as ``check_record`` returns them)."""
    details, kinds = distinct_details(result.bets.values())
    settled = [None] * len(details)
    for kind, bet in zip(kinds, result.bets.values()):
        if settled[kind] is None:
            settled[kind] = (details[kind], bet.outcome, bet.returned)
    held = [bets[record_id] for record_id in result.bets]
    return Plan(bets=[pk for pk, _ in held], players=[player for _, player in held], kinds=kinds, details=settled,
                staked=result.total_staked, returned=result.total_returned)


def keep(round_, plan):
    """Keep ``plan`` for ``round_`` (RESULTED in the caller's transaction) until it is settled."""
    PendingSettlement.objects.create(
        round=round_, bets=_text(plan.bets), players=_text(plan.players), kinds=_text(plan.kinds),
        details=[[detail, outcome, str(returned)] for detail, outcome, returned in plan.details],
        totals=[str(plan.staked), str(plan.returned)])


def taken(round_):
    """The ``Plan`` kept for ``round_`` (locked by the caller), deleted in the caller's
    transaction, which settles it; None when none was kept (a round resulted before plans were)."""
    kept = PendingSettlement.objects.filter(round=round_).first()
    if kept is None:
        return None
    kept.delete()
    return Plan(bets=_numbers(kept.bets), players=_numbers(kept.players), kinds=_numbers(kept.kinds),
                details=[(detail, outcome, Decimal(returned)) for detail, outcome, returned in kept.details],
                staked=Decimal(kept.totals[0]), returned=Decimal(kept.totals[1]))


def forget(round_):
    """Drop the plan kept for ``round_`` (a RESULTED round voided instead of settled)."""
    PendingSettlement.objects.filter(round=round_).delete()


def _text(numbers):
    return ",".join(map(str, numbers))


def _numbers(text):
    return list(map(int, text.split(","))) if text else []
