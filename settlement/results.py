"""Taking a round's record (docs/round-record.md): checked against the bets, stored unchanged as
evidence with the settlement the check computed (``settlement.plans``), the round RESULTED, and
its settlement queued once the transaction commits."""

from django.db import transaction

from tables.locks import lock_round
from tables.models import Round, RoundEvent, Shoe
from tables.services import event
from tables.validation import check_json
from wagering.records import check_record

from . import plans
from .tasks import settle_round


@transaction.atomic
def record_result(*, round_id, record, cut_card_out=False, actor="", actor_user=None):
    """Take the round record of a CLOSED round (docs/round-record.md): validate it (``check_record``),
    store it unchanged as evidence and the settlement the engine computed for it (``plans.keep``),
    move the round to RESULTED and queue settlement after commit.
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
    result, bets = check_record(round_, record)
    round_.record = record
    round_.save(update_fields=["state", "resulted_at", "record"])
    plans.keep(round_, plans.plan_of(result, bets))  # what the worker will write
    if cut_card_out:
        Shoe.objects.filter(pk=round_.shoe_id).update(cut_card_out=True)
    event(round_, RoundEvent.Kind.RESULTED, actor=actor, actor_user=actor_user, cut_card_out=cut_card_out).save()
    settle_round.delay_on_commit(round_.pk)
    return round_
