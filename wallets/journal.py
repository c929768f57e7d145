"""The journal of the calls made to operators' wallets: what each call sends, and the record of
each attempt (``WalletCall``) with what it did to its movement."""

from collections import defaultdict

from django.db import connection, transaction

from accounts.sql import insert_rows

from . import client, pg
from .models import WalletCall, WalletMovement


def fields_of(movement):
    """The body fields (less ``request_id`` and ``sent_at``) of ``movement``'s call; a movement tied
    to no round (a manual adjustment) has ``round`` and ``table`` null (docs/wallet-api.md 8.7)."""
    minor_units = movement.currency.minor_units
    fields = {"transaction_id": client.transaction_id(movement.key), "player": movement.player.code,
              "currency": movement.currency_id, "round": movement.round_ref or None}
    if movement.call == WalletMovement.Call.ROLLBACK:
        fields["reference_transaction_id"] = client.transaction_id(movement.reference.key)
        return fields
    return {**fields, "amount": client.money(movement.amount, minor_units), "table": movement.table_ref or None,
            "kind": movement.kind, "bets": movement.bets}


def record(movement, answer):
    """Keep ``answer`` (a ``client.Answer``) of one attempt of ``movement`` as its ``WalletCall``
    (returned, unsaved; the balance the operator answered is the call's) and set the movement's
    attempts, status and last error from it (unsaved)."""
    movement.attempts += 1
    movement.status = answer.status or ""
    movement.last_error = answer.error
    return WalletCall(movement=movement, request_id=answer.request_id, sent_at=answer.sent_at,
                      request=answer.request, http_status=answer.http_status, answer=answer.body,
                      outcome=answer.outcome, error=answer.error, duration_ms=answer.duration_ms)


@transaction.atomic
def save_attempts(movements, calls, fields):
    """Write ``fields`` (names) of ``movements`` as ``record`` and the caller left them, and the
    attempts ``calls`` (``WalletCall``), in one transaction: one UPDATE per distinct combination
    of the values (a batch's movements mostly share theirs: OK at the same instant)."""
    groups = defaultdict(list)
    for m in movements:
        groups[tuple(getattr(m, f) for f in fields)].append(m.pk)
    for values, ids in groups.items():
        if connection.vendor == "postgresql":
            pg.update_movements(ids, dict(zip(fields, values)))
        else:
            WalletMovement.objects.filter(pk__in=ids).update(**dict(zip(fields, values)))
    insert_rows(WalletCall, calls)
