"""The outbox's bulk statements on PostgreSQL, each ONE statement with its arrays sent in binary
(``accounts.sql.execute_binary``), where the ORM would send thousands of quoted parameters
(``IN (...)`` lists) and build a model instance per related row:

- ``oldest``: the movement each player's delivery waits on;
- ``claim``: the lease of the movements to send, returned ready to send;
- ``update_movements``: an attempt's record (its calls: ``accounts.sql.insert_rows``).

Every other database runs the ORM path in ``wallets.outbox`` and ``wallets.journal`` (same rows,
same order)."""

from django.db import connection

from accounts.models import Currency, Operator, Player
from accounts.sql import execute_binary, instances, number_array, select_list, sql_type

from .models import WalletMovement

State = WalletMovement.State
_MOVEMENTS = WalletMovement._meta.db_table
#: The outbox's movements (``wallets.outbox.OUTBOX``) as SQL over ``m``.
_OUTBOX = "(m.call IN ('credit', 'rollback') OR m.kind = 'correction')"
#: The movement's columns ``claim`` loads: the ones a call and its record read and write.
_FIELDS = {f.attname for f in WalletMovement._meta.concrete_fields} - {"created_at", "ledger_key"}


def oldest(players):
    """``{player_id: (movement id, its next_attempt_at)}``: the oldest PENDING outbox movement of
    each of ``players`` (player ids; None: every player), the one its delivery waits on."""
    where, params = ("", []) if players is None else ("AND m.player_id = ANY(%s::bigint[])", [number_array(players)])
    rows = execute_binary(
        f"""SELECT DISTINCT ON (m.player_id) m.player_id, m.id, m.next_attempt_at
            FROM {_MOVEMENTS} AS m WHERE m.state = %b::varchar AND {_OUTBOX} {where}
            ORDER BY m.player_id, m.id""", [State.PENDING.value, *params])
    return {player: (pk, at) for player, pk, at in rows}


def claim(ids, now):
    """Lease the movements ``ids`` still PENDING and due at ``now`` (``FOR UPDATE SKIP LOCKED``:
    those another deliverer holds are left to it) for one attempt each: ``next_attempt_at`` and
    ``leased_until`` pushed to ``now`` + twice the operator's timeout + 1 s, in the caller's
    transaction. Returns the movements taken (by id), each with its ``operator``, ``currency``,
    ``player`` (its code loaded) and, for a rollback, ``reference`` (its key loaded)."""
    rows = execute_binary(
        f"""WITH taken AS (
                SELECT m.id, p.code, r.key AS reference_key FROM {_MOVEMENTS} AS m
                JOIN {Player._meta.db_table} AS p ON p.id = m.player_id
                LEFT JOIN {_MOVEMENTS} AS r ON r.id = m.reference_id
                WHERE m.id = ANY(%s::bigint[]) AND m.state = %b::varchar AND m.next_attempt_at <= %b::timestamptz
                ORDER BY m.id FOR UPDATE OF m SKIP LOCKED)
            UPDATE {_MOVEMENTS} AS m
            SET next_attempt_at = %b::timestamptz + (2 * o.wallet_timeout_ms + 1000) * interval '1 millisecond',
                leased_until = %b::timestamptz + (2 * o.wallet_timeout_ms + 1000) * interval '1 millisecond'
            FROM taken, {Operator._meta.db_table} AS o WHERE m.id = taken.id AND o.id = m.operator_id
            RETURNING {select_list(WalletMovement, "m", _FIELDS)}, taken.code, taken.reference_key""",
        [number_array(ids), State.PENDING.value, now, now, now])
    width = len(_FIELDS)
    taken = sorted(instances(WalletMovement, [row[:width] for row in rows], _FIELDS), key=lambda m: m.pk)
    codes = {row[0]: row[width:] for row in rows}
    operators = Operator.objects.in_bulk({m.operator_id for m in taken})
    currencies = Currency.objects.in_bulk({m.currency_id for m in taken})
    bets = WalletMovement._meta.get_field("bets")
    for m in taken:
        m.bets = bets.from_db_value(m.bets, None, connection)  # the JSON text as the ORM reads it
        code, reference_key = codes[m.pk]
        m.operator, m.currency = operators[m.operator_id], currencies[m.currency_id]
        m.player = Player(pk=m.player_id, operator_id=m.operator_id, code=code)
        if m.reference_id is not None:
            m.reference = WalletMovement(pk=m.reference_id, key=reference_key)
    return taken


def update_movements(ids, values):
    """Set ``values`` (``{field name: value}``) on the movements ``ids``, in one statement."""
    fields = [WalletMovement._meta.get_field(name) for name in values]
    execute_binary(
        f"""UPDATE {_MOVEMENTS} SET {", ".join(f"{f.column} = %b::{sql_type(f)}" for f in fields)}
            WHERE id = ANY(%s::bigint[])""",
        [values[f.name] for f in fields] + [number_array(ids)])
