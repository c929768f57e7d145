"""The chain of round records (tamper evidence): every round is sealed at each final step it reaches
(SETTLED, resettled, VOIDED), and each table's seals form one hash chain.

A seal (``RoundSeal``) holds what the round was (table, variant, rules version, pay tables in
force, shoe, times, a void's reason and actor) and the SHA-256 of what it is made of: its record as
received, its corrections, its timeline (every ``RoundEvent`` up to the last one at sealing) and
its bets with their extra stakes, as they stood. It is linked to the table's previous seal like a
ledger transaction to its wallet's (``accounts.chain.link``: SHA-256 of the previous
``chain_hash`` and the seal's canonical content), and the table's ``SealChain`` keeps the head.

A table's chain has one writer at a time (its head row is locked), and a table deals one round at
a time, so seals do not wait for one another; and none is written by the settlement itself:
settling, resettling or voiding a round queues ``seal_round`` once it commits, which reads the
round as committed (a big boundless round's bets and timeline take a while to hash: never while
the round's wallets are locked). A round whose seal task was lost is sealed by the beat
(``seal_unsealed``); ``verify`` lists the rounds still waiting.

Hashes are over canonical JSON (``canonical``: sorted keys, no spaces, money as its decimal
string, times as ISO 8601 in UTC) of values as read from the database.
"""

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from celery import shared_task
from django.db import IntegrityError, OperationalError, transaction
from django.db.models import Max, OuterRef, Subquery
from django.utils import timezone

from accounts import chain
from accounts.chain import as_bytes, link
from tables.locks import lock_round
from tables.models import Round, RoundEvent
from wagering.models import Bet, BetExtra

from .models import RoundCorrection, RoundSeal, SealChain

State = Round.State
#: The steps at which a round is sealed.
FINAL = (State.SETTLED, State.VOIDED)
#: Rows read per query when hashing a round's bets or timeline.
CHUNK = 5000


def canonical(value):
    """``value`` (JSON-able, with ``Decimal`` and aware ``datetime``) as the bytes its hashes are of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_plain).encode()


def _plain(value):
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    raise TypeError(f"{type(value).__name__} is not canonical JSON")


def sha256(value):
    """The SHA-256 (hex) of ``value``'s canonical JSON, or None for None."""
    return None if value is None else hashlib.sha256(canonical(value)).hexdigest()


def _digest(rows):
    """``(count, SHA-256 hex)`` of ``rows`` (tuples), one canonical line each."""
    digest, count = hashlib.sha256(), 0
    for row in rows:
        digest.update(canonical(list(row)) + b"\n")
        count += 1
    return count, digest.hexdigest()


def timeline_of(round_id, last_event):
    """``{"events", "last_event", "sha256"}`` of round ``round_id``'s timeline up to event id
    ``last_event`` (None: no event)."""
    events = (RoundEvent.objects.filter(round_id=round_id, pk__lte=last_event or 0).order_by("pk")
              .values_list("pk", "kind", "actor", "actor_user_id", "payload", "created_at").iterator(chunk_size=CHUNK))
    count, digest = _digest(events)
    return {"events": count, "last_event": last_event, "sha256": digest}


#: A bet's columns as its seal hashes them.
BET_COLUMNS = ("pk", "record_id", "player_id", "type", "seat", "stake", "state", "outcome", "returned",
               "follow_double", "follow_split", "placed_at", "settled_at", "settlement_id")


def bets_of(round_id):
    """``{"count", "staked", "returned", "sha256"}`` of round ``round_id``'s bets as they stand, each
    with its extra stakes (``staked``: stakes and extras; ``returned``: what settlement or a void
    credited; decimal strings)."""
    extras = {}
    for bet_id, *extra in (BetExtra.objects.filter(bet__round_id=round_id).order_by("pk")
                           .values_list("bet_id", "kind", "hand", "amount", "key")):
        extras.setdefault(bet_id, []).append(extra)
    totals = {"staked": Decimal(0), "returned": Decimal(0)}

    def rows():
        for bet in (Bet.objects.filter(round_id=round_id).order_by("pk").values_list(*BET_COLUMNS)
                    .iterator(chunk_size=CHUNK)):
            own = extras.get(bet[0], [])
            totals["staked"] += bet[5] + sum((x[2] for x in own), Decimal(0))
            totals["returned"] += bet[8] or 0
            yield (*bet, own)

    count, digest = _digest(rows())
    return {"count": count, "staked": str(totals["staked"]), "returned": str(totals["returned"]), "sha256": digest}


def _time(value):
    return None if value is None else _plain(value)


def content_of(round_, correction):
    """The content of ``round_``'s seal at its ``correction`` (``round_.table`` with its currency
    and ``round_.shoe`` loaded): see the module docstring."""
    corrections = [{"sequence": c.sequence, "record": sha256(c.record), "reason": c.reason, "actor": c.actor_label,
                    "at": _time(c.created_at)}
                   for c in RoundCorrection.objects.filter(round=round_, sequence__lte=correction).order_by("sequence")]
    last_event = RoundEvent.objects.filter(round=round_).aggregate(last=Max("pk"))["last"]
    void = None
    if round_.state == State.VOIDED:
        voided = RoundEvent.objects.filter(round=round_, kind=RoundEvent.Kind.VOIDED).order_by("-pk").first()
        if voided is not None:
            void = {"reason": voided.payload.get("reason"), "actor": voided.actor, "at": _time(voided.created_at)}
    rules = round_.rules()
    return {
        "round": round_.pk, "table": round_.table.code, "external_id": round_.external_id,
        "variant": round_.table.variant, "rules_version": round_.rules_version,
        "pay_tables": {bet: {pattern: str(odds) for pattern, odds in table.items()}
                       for bet, table in rules.pay_tables.items()},
        "currency": round_.table.currency_id, "shoe": round_.shoe.sequence, "shoe_round": round_.shoe_round,
        "state": round_.state, "correction": correction,
        "times": {name: _time(getattr(round_, name)) for name in
                  ("opened_at", "closed_at", "suspended_at", "cancelled_at", "resulted_at", "settled_at", "voided_at")},
        "record": sha256(round_.record), "corrections": corrections, "void": void,
        "timeline": timeline_of(round_.pk, last_event), "bets": bets_of(round_.pk),
    }


def last_correction(round_):
    """The sequence of ``round_``'s last correction (0: none)."""
    return round_.corrections.aggregate(last=Max("sequence"))["last"] or 0


@transaction.atomic(durable=True)
def seal(*, round_id):
    """Seal round ``round_id`` at the step it stands at, if SETTLED or VOIDED and not yet sealed
    there: its content (``content_of``, read under a share lock of the round: no void or
    resettle meanwhile), linked to its table's chain under the chain's lock. Returns the
    ``RoundSeal`` (the one already written, if any), or None for a round in no final state.
    Safe to run twice, or at once. Raises ``NotFound``."""
    round_ = lock_round(round_id, shared=True)
    if round_.state not in FINAL:
        return None
    correction = last_correction(round_)
    step = {"round": round_, "state": round_.state, "correction": correction}
    sealed = RoundSeal.objects.filter(**step).first()
    if sealed is not None:
        return sealed
    content = content_of(Round.objects.select_related("table__currency", "shoe").get(pk=round_.pk), correction)
    SealChain.objects.get_or_create(table_id=round_.table_id)
    chain = SealChain.objects.select_for_update().get(table_id=round_.table_id)
    sealed = RoundSeal.objects.filter(**step).first()  # a concurrent seal of this step, seen once it committed
    if sealed is not None:
        return sealed
    prev = as_bytes(chain.head)
    sealed = RoundSeal.objects.create(table_id=round_.table_id, sequence=chain.sequence + 1, content=content,
                                      prev_hash=prev, chain_hash=link(prev, canonical(content)), **step)
    chain.sequence, chain.head = sealed.sequence, sealed.chain_hash
    chain.save(update_fields=["sequence", "head"])
    return sealed


@shared_task(name="settlement.seal_round", autoretry_for=(OperationalError, IntegrityError), max_retries=5,
             retry_backoff=2, retry_jitter=True)
def seal_round(round_id):
    """Seal round ``round_id`` (``seal``); queued by ``seal_after_commit``."""
    seal(round_id=round_id)


def seal_after_commit(round_):
    """Queue ``round_``'s seal once the caller's transaction commits (its final step written)."""
    seal_round.delay_on_commit(round_.pk)


#: How far back the beat looks for rounds whose seal task was lost (rounds opened since then).
REDRIVE_WINDOW = timedelta(days=2)


def unsealed_round_ids(*, since=None):
    """Ids of the rounds in a final state without the seal of the step they stand at, among those
    opened at ``since`` (an aware datetime) or later; None: every round."""
    rounds = Round.objects.filter(state__in=FINAL)
    if since is not None:
        rounds = rounds.filter(opened_at__gte=since)
    last = RoundCorrection.objects.filter(round=OuterRef("pk")).order_by("-sequence").values("sequence")[:1]
    sealed = set(RoundSeal.objects.filter(round__in=rounds).values_list("round_id", "state", "correction"))
    found = rounds.annotate(correction=Subquery(last)).values_list("pk", "state", "correction")
    return sorted(pk for pk, state, correction in found if (pk, state, correction or 0) not in sealed)


def seal_unsealed():
    """Beat: seal the rounds opened in the last ``REDRIVE_WINDOW`` that ``unsealed_round_ids`` finds
    (each in its own transaction). Returns their ids."""
    ids = unsealed_round_ids(since=timezone.now() - REDRIVE_WINDOW)
    for round_id in ids:
        seal(round_id=round_id)
    return ids


# --- verifying -------------------------------------------------------------------------------------

@dataclass
class Verified(chain.Verified):
    """What ``verify`` read (``links``: seals), and the ``unsealed`` rounds (waiting for their
    seal: not a break)."""

    unsealed: list = field(default_factory=list)

    def stop(self, seal_id, table, why):
        """Keep the broken ``seal_id`` (None: a head) of ``table``'s chain, ``why``; returns self."""
        return super().stop(seal_id, table, why, link_name="round seal", chain_name="table")


def verify():
    """Recompute every table's chain of seals in seal id order and compare each seal with the rows
    it covers: the round's record, corrections and timeline (always: they only grow), and its
    bets for the round's latest seal when the round still stands at that step. Returns a
    ``Verified`` whose ``broken`` names the first seal that no longer holds."""
    result, heads = Verified(), {}
    codes = dict(SealChain.objects.values_list("table_id", "table__code"))
    latest = dict(RoundSeal.objects.values("round_id").annotate(last=Max("pk")).values_list("round_id", "last"))
    for sealed in RoundSeal.objects.select_related("round__table__currency", "round__shoe").order_by("pk").iterator():
        result.links += 1
        code = codes.get(sealed.table_id, str(sealed.table_id))
        sequence, prev = heads.get(sealed.table_id, (0, None))
        if sealed.sequence != sequence + 1 or as_bytes(sealed.prev_hash) != prev:
            return result.stop(sealed.pk, code, "its previous link does not match: a seal before it in its "
                                                    "table's chain was changed, removed or inserted")
        if as_bytes(sealed.chain_hash) != link(prev, canonical(sealed.content)):
            return result.stop(sealed.pk, code, "its content does not match its hash (the seal was edited)")
        heads[sealed.table_id] = (sealed.sequence, as_bytes(sealed.chain_hash))
        why = _differs(sealed, latest.get(sealed.round_id) == sealed.pk)
        if why:
            return result.stop(sealed.pk, code, f"round {sealed.round.title}: {why}")
    for table_id, sequence, head in SealChain.objects.values_list("table_id", "sequence", "head"):
        if (sequence, as_bytes(head)) != heads.get(table_id, (0, None)):
            return result.stop(None, codes[table_id], "the table's chain head is not its last seal's link "
                                                          "(the chain's end was removed, or the head edited)")
    result.chains = len(heads)
    result.unsealed = unsealed_round_ids()
    return result


def _differs(sealed, latest):
    """Why the rows ``sealed`` covers no longer match it (None when they do); the bets are compared
    only for the round's ``latest`` seal, if the round still stands at its step."""
    round_, content = sealed.round, sealed.content
    if sha256(round_.record) != content["record"]:
        return "its record differs from the one sealed"
    corrections = {c.sequence: sha256(c.record) for c in round_.corrections.filter(sequence__lte=sealed.correction)}
    if corrections != {c["sequence"]: c["record"] for c in content["corrections"]}:
        return "its corrections differ from those sealed"
    if timeline_of(round_.pk, content["timeline"]["last_event"]) != content["timeline"]:
        return "its timeline differs from the one sealed (an event was changed, removed or inserted)"
    standing = latest and round_.state == sealed.state and last_correction(round_) == sealed.correction
    if standing and bets_of(round_.pk) != content["bets"]:
        return "its bets differ from those sealed"
    return None
