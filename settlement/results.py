"""Taking a round's record (docs/round-record.md): checked against the bets, stored unchanged as
evidence with the settlement the check computed (``settlement.plans``), the round RESULTED, and
its settlement queued once the transaction commits."""

import logging

from django.db import transaction
from kombu.exceptions import OperationalError as BrokerError

from accounts.exceptions import IdempotencyConflict
from tables.cards import check_record_cards
from tables.locks import lock_round
from tables.models import Round, RoundEvent, Shoe
from tables.services import event
from tables.validation import check_json
from wagering.records import check_record

from . import plans
from .memory import without_cyclic_gc
from .selectors import corrected_records
from .tasks import settle_round

logger = logging.getLogger(__name__)


@without_cyclic_gc
@transaction.atomic
def record_result(*, round_id, record, cut_card_out=False, actor="", actor_user=None):
    """Take the round record of a CLOSED round (docs/round-record.md): validate it (``check_record``;
    ``tables.cards.check_record_cards``: its cards are the cards scanned, within the shoe's, where
    a corrected round of the shoe counts with its correction's cards), store it unchanged as
    evidence with the settlement the engine computed for it (``plans.keep``), move the round to
    RESULTED and queue settlement after commit.
    ``cut_card_out``: the cut card came out in this round, the last of its shoe (RULES 1).
    The same record again for a round already RESULTED, SETTLED or SETTLEMENT_FAILED returns the
    round unchanged (safe to retry; a round still RESULTED has its settlement queued again, which
    is safe to run twice); another record is an ``IdempotencyConflict`` (its ``extra["state"]``:
    the round's state), and a round in any other state but CLOSED an ``IllegalTransition``.

    Returns the ``Round``, with ``settle_queued``: True once its settle task was handed to the
    broker after commit, False when the broker could not be reached (the record is stored all the
    same: beat's re-drive queues the task ``SETTLEMENT_REDRIVE_AFTER_SECONDS`` after the record,
    once the broker is back), None when there was nothing to queue (already settled or failed) or
    the caller's transaction has not committed yet. Raises ``NotFound``, ``IdempotencyConflict``,
    ``IllegalTransition``, ``InvalidRecord``, ``InvalidInput`` (a NUL character in the record)
    (nothing changes then)."""
    round_ = lock_round(round_id)
    round_.settle_queued = None
    if round_.state in (Round.State.RESULTED, Round.State.SETTLED, Round.State.SETTLEMENT_FAILED):
        if round_.record != record:
            raise IdempotencyConflict(f"round {round_.title} already holds another record: a record is taken once "
                                      "(a misread card is corrected by an operator's resettle)", state=round_.state)
        if round_.state == Round.State.RESULTED:  # a retry: its first settle task may never have been queued
            transaction.on_commit(lambda: _queue_settlement(round_))
        return round_  # the same record again (a retry): already taken, nothing changes
    round_.transition(Round.State.RESULTED)
    check_json(record, "record")  # no NUL (PostgreSQL's jsonb refuses it)
    result, bets = check_record(round_, record)
    check_record_cards(round_, record, corrected=corrected_records(shoe_id=round_.shoe_id))
    round_.record = record
    round_.save(update_fields=["state", "resulted_at", "record"])
    plans.keep(round_, plans.plan_of(result, bets))  # what the worker will write
    if cut_card_out:
        Shoe.objects.filter(pk=round_.shoe_id).update(cut_card_out=True)
    event(round_, RoundEvent.Kind.RESULTED, actor=actor, actor_user=actor_user, cut_card_out=cut_card_out).save()
    transaction.on_commit(lambda: _queue_settlement(round_))
    return round_


def _queue_settlement(round_):
    """Queue ``settle_round`` for ``round_`` (committed RESULTED) and set its ``settle_queued``;
    a broker that cannot be reached is logged, not raised: the re-drive settles the round later."""
    try:
        settle_round.delay(round_.pk)
    except BrokerError as error:
        round_.settle_queued = False
        logger.warning("round %s (%s) is RESULTED but its settle task could not be queued (broker: %s); "
                       "beat's re-drive will queue it", round_.pk, round_.title, error)
    else:
        round_.settle_queued = True
