"""``place_bets`` on PostgreSQL: its three bulk statements, each ONE statement with array
parameters sent in binary (``accounts.sql.execute_binary``), where the ORM would send thousands
of quoted parameters (``IN (...)`` lists) and build a model instance per event row.

- ``lock_wallets``: the players' wallets locked in primary-key order, with their players;
- ``wallets``: the wallets of thousands of players (a settlement's payouts, a void's refunds);
- ``known_bets``: the bets already placed under some keys, or on some record ids of the round;
- ``insert_bets``: the new bets and their ``bet_placed`` events.

Every other database runs the ORM path in ``wagering.services`` (same rows, same order, same
errors: a unique key already taken raises Django's ``IntegrityError``)."""

import json
import re

from django.db import connection
from django.utils import timezone

from accounts.models import Account, Player
from accounts.sql import BY_KEY, execute_binary, number_array
from tables.models import RoundEvent

from .models import Bet


def _select(model, alias, names=None):
    """The select list of ``model``'s concrete columns, or of those whose field is in ``names``
    (in ``model``'s field order, which ``from_db`` expects)."""
    return ", ".join(f"{alias}.{connection.ops.quote_name(f.column)}" for f in model._meta.concrete_fields
                     if names is None or f.attname in names)


def _instances(model, rows, names=None):
    """Model instances of ``rows`` (tuples of the columns ``_select(model, alias, names)`` lists),
    as a queryset makes them; the fields not in ``names`` are deferred (loaded if read)."""
    return [model.from_db(connection.alias, names, row) for row in rows]


#: The columns of a wallet and its player that placing bets and posting stakes read; the others
#: are deferred (their reading and parsing, timestamps above all, was most of the query's time).
WALLET_FIELDS = {"id", "kind", "currency_id", "player_id", "balance", "negative_flagged"}
PLAYER_FIELDS = {"id", "code", "account_kind"}


def lock_wallets(currency, codes):
    """The wallets in ``currency`` (a ``Currency``) of the players whose code is in ``codes`` (a
    set of str), locked ``FOR UPDATE`` in primary-key order; each with its ``player`` and
    ``currency`` (the instance given) loaded. Returns a list of ``Account``; the fields outside
    ``WALLET_FIELDS`` and ``PLAYER_FIELDS`` are deferred."""
    width = len(WALLET_FIELDS)
    rows = execute_binary(
        f"""SELECT {_select(Account, "a", WALLET_FIELDS)}, {_select(Player, "p", PLAYER_FIELDS)}
            FROM {Account._meta.db_table} AS a JOIN {Player._meta.db_table} AS p ON p.id = a.player_id
            WHERE a.kind = %b::varchar AND a.currency_id = %b::varchar AND p.code = ANY(%b::varchar[])
            ORDER BY a.id FOR UPDATE OF a""",
        [Account.Kind.WALLET.value, currency.pk, list(codes)])
    wallets = _instances(Account, [row[:width] for row in rows], WALLET_FIELDS)
    for wallet, player in zip(wallets, _instances(Player, [row[width:] for row in rows], PLAYER_FIELDS)):
        wallet.player, wallet.currency = player, currency
    return wallets


def wallets(currency, player_ids):
    """The wallets in ``currency`` (a ``Currency``, set on each) of the players ``player_ids`` (ints),
    found through the player index one by one whatever the estimates (``BY_KEY``): for the 10,000
    winners of a round the planner scanned every wallet. Returns a list of ``Account``; the fields
    outside ``WALLET_FIELDS`` are deferred."""
    rows = execute_binary(
        f"""SELECT {_select(Account, "a", WALLET_FIELDS)}
            FROM unnest(%s::bigint[]) AS p(id) JOIN {Account._meta.db_table} AS a ON a.player_id = p.id
            WHERE a.kind = %b::varchar AND a.currency_id = %b::varchar""",
        [number_array(player_ids), Account.Kind.WALLET.value, currency.pk], planner=BY_KEY)
    found = _instances(Account, rows, WALLET_FIELDS)
    for wallet in found:
        wallet.currency = currency
    return found


def known_bets(round_, keys, record_ids):
    """The ``Bet`` rows whose idempotency key is in ``keys``, or of ``round_`` whose record id is
    in ``record_ids`` (sets of str)."""
    return _instances(Bet, execute_binary(
        f"""SELECT {_select(Bet, "b")} FROM {Bet._meta.db_table} AS b
            WHERE b.idempotency_key = ANY(%b::varchar[])
               OR (b.round_id = %b::bigint AND b.record_id = ANY(%b::varchar[]))""",
        [list(keys), round_.pk, list(record_ids)]))


def _sql_type(field):
    """``field``'s PostgreSQL type without its modifiers (``varchar``, ``numeric``): an explicit cast
    to ``varchar(128)`` would cut a longer string where inserting it into the column refuses it."""
    return re.sub(r"\(.*\)", "", field.db_type(connection))


def insert_bets(round_, bets, payloads, *, actor, actor_user):
    """Insert ``bets`` (unsaved ``Bet`` instances, every column set) and, after them in the same
    statement, one ``bet_placed`` event of ``round_`` per bet, in order: ``payloads`` (one dict per
    bet, JSON-able) with the new bet's id added as ``bet``. A column with one value for all the
    bets (the round, the state...) goes as one parameter, the others as arrays. The ids are drawn
    from the bets' sequence first, in order, so that the events need no join back to the inserted
    rows (whose row-count estimate would make the planner compile the statement: seconds). The
    instances get their primary keys. Raises ``IntegrityError`` if a bet's idempotency key or
    record id is taken."""
    table, pk = Bet._meta.db_table, Bet._meta.pk.column
    arrays, columns, values, constants = [], [], [], []
    for f in Bet._meta.concrete_fields:
        if f.primary_key:
            continue
        column, column_values = connection.ops.quote_name(f.column), [getattr(b, f.attname) for b in bets]
        if len(set(column_values)) == 1:
            constants.append((column, f"%b::{_sql_type(f)}", column_values[0]))
        else:
            arrays.append(f"%b::{_sql_type(f)}[]")
            columns.append(column)
            values.append(column_values)
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
