"""``place_bets`` on PostgreSQL: its bulk statements, each ONE statement with array parameters sent
in binary (``accounts.sql.execute_binary``), where the ORM would send thousands of quoted
parameters (``IN (...)`` lists) and build a model instance per event row.

- ``known_bets``: the bets already placed under some keys, or on some record ids of the round;
- ``insert_bets``: the new bets and their ``bet_placed`` events.

Every other database runs the ORM path in ``wagering.placement`` (same rows, same order, same
errors: a unique key already taken raises Django's ``IntegrityError``)."""

import json

from django.db import connection
from django.utils import timezone

from accounts.sql import execute_binary, insert_columns, instances, select_list
from tables.models import RoundEvent

from .models import Bet


def known_bets(round_, keys, record_ids):
    """The ``Bet`` rows of ``round_``'s table whose idempotency key is in ``keys``, or of ``round_``
    whose record id is in ``record_ids`` (sets of str)."""
    return instances(Bet, execute_binary(
        f"""SELECT {select_list(Bet, "b")} FROM {Bet._meta.db_table} AS b
            WHERE (b.table_id = %b::bigint AND b.idempotency_key = ANY(%b::varchar[]))
               OR (b.round_id = %b::bigint AND b.record_id = ANY(%b::varchar[]))""",
        [round_.table_id, list(keys), round_.pk, list(record_ids)]))


def insert_bets(round_, bets, payloads, *, actor, actor_user):
    """Insert ``bets`` (unsaved ``Bet`` instances, every column set) and, after them in the same
    statement, one ``bet_placed`` event of ``round_`` per bet, in order: ``payloads`` (one dict per
    bet, JSON-able) with the new bet's id added as ``bet``. A column with one value for all the
    bets (the round, the state...) goes as one parameter, the others as arrays. The ids are drawn
    from the bets' sequence first, in order, so that the events need no join back to the inserted
    rows (whose row-count estimate would make PostgreSQL JIT-compile the statement, which takes
    longer than running it). The instances get their primary keys. Raises ``IntegrityError`` if a
    bet's idempotency key or record id is taken."""
    table, pk = Bet._meta.db_table, Bet._meta.pk.column
    constants, varying = insert_columns(Bet, bets)
    columns, arrays, values = [c for c, _, _ in varying], [p for _, p, _ in varying], [v for _, _, v in varying]
    ids = execute_binary(
        f"""WITH v AS (SELECT nextval((SELECT pg_get_serial_sequence(%b, %b))::regclass) AS {pk}, *
                       FROM unnest({", ".join(arrays + ["%b::text[]"])}) WITH ORDINALITY
                       AS v({", ".join(columns + ["payload", "n"])})),
            bet AS (INSERT INTO {table} ({", ".join([pk] + columns + [c for c, _, _ in constants])})
                    SELECT {", ".join([pk] + columns + [p for _, p, _ in constants])} FROM v),
            events AS (INSERT INTO {RoundEvent._meta.db_table}
                              (round_id, kind, actor, actor_user_id, payload, created_at)
                       SELECT %b::bigint, %b::varchar, %b::varchar, %b::bigint,
                              payload::jsonb || jsonb_build_object('bet', {pk}), %b::timestamptz FROM v ORDER BY n)
            SELECT {pk} FROM v ORDER BY n""",
        [table, pk] + values + [[json.dumps(p) for p in payloads]] + [v for _, _, v in constants]
        + [round_.pk, RoundEvent.Kind.BET_PLACED.value, actor[:100], getattr(actor_user, "pk", None), timezone.now()])
    for bet, (pk_value,) in zip(bets, ids):
        bet.pk = pk_value
        bet._state.adding, bet._state.db = False, connection.alias
