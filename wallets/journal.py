"""The journal of the calls made to operators' wallets: what each call sends, and the record of
each attempt (``WalletCall``) with what it did to its movement."""

from . import client
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
    (returned, unsaved) and set the movement's status and balance from it (unsaved)."""
    movement.attempts += 1
    movement.status = answer.status or ""
    if answer.balance is not None:
        movement.balance = answer.balance
    movement.last_error = answer.error
    return WalletCall(movement=movement, request_id=answer.request_id, sent_at=answer.sent_at,
                      request=answer.request, http_status=answer.http_status, answer=answer.body,
                      outcome=answer.outcome, error=answer.error, duration_ms=answer.duration_ms)
