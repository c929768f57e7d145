"""Statements on PostgreSQL with parameters sent in binary, for the ledger's hot path and bulk writes.

Django's psycopg cursor binds parameters on the client: a list becomes an array literal, every
element quoted and escaped in Python, which is slow for the thousands of values of a bulk write.
Here the parameters go to the server in binary (``%b`` placeholders), length-prefixed, never
escaped, except arrays of numbers: one text literal each (``number_array``, ``%s``), which is
cheaper to build. A statement may run with planner settings of its own (``BY_KEY``)."""

import re
import time
from datetime import UTC, datetime, timedelta

import psycopg
from django.db import connection
from django.db.models import signals
from django.db.models.base import ModelState
from psycopg.types.datetime import TimestamptzLoader

#: psycopg prepares a statement after this many executions when its connection's threshold is set;
#: Django leaves it unset (nothing is prepared). ``execute_binary`` sets it to this on a connection
#: where it prepares, so that only the statements it is asked to prepare ever are.
ONLY_WHEN_ASKED = 2**31 - 1


def execute_binary(sql, params, *, prepare=False, planner=None):
    """Run ``sql`` (PostgreSQL only; placeholders ``%b``, or ``%(name)b`` with a dict; ``%s`` for a
    ``number_array`` literal) with ``params`` (a list or a dict: ``list`` values become arrays, cast
    them in ``sql``: ``%b::bigint[]``; money as ``Decimal``) on Django's connection, in its current
    transaction. Returns the result rows (a list of tuples; empty for a statement without result).
    Database errors are raised as Django's (``IntegrityError``…). The statement is logged in
    ``connection.queries`` as Django's cursor logs (DEBUG, tests counting queries).

    ``prepare=True``: run ``sql`` as a prepared statement of the connection (parsed once; planned
    once when PostgreSQL finds its generic plan as good as a custom one, which it does when the
    row counts do not hang on parameter values: see ``array_sql``). For statements run often
    with a few rows; never for bulk arrays, whose generic plan would be a guess.

    ``planner`` (inside a transaction): settings for this statement only (``{"jit": "off"}``), each
    restored after it, for a bulk statement the planner misjudges (see ``BY_KEY``).

    A ``timestamptz`` comes back as an aware ``datetime`` in the connection's time zone (UTC, as
    Django sets it), parsed by psycopg's own loader (compiled, with psycopg-binary) rather than the
    one Django registers on its connections (pure Python): a page of bets holds dozens."""
    connection.ensure_connection()
    raw = connection.connection
    if prepare and raw.prepare_threshold is None:
        raw.prepare_threshold = ONLY_WHEN_ASKED
    start = time.monotonic()
    with connection.wrap_database_errors, psycopg.Cursor(raw) as cursor:
        cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
        if planner:
            restore = _set_config(cursor, planner)
        cursor.execute(sql, params, prepare=prepare)
        rows = cursor.fetchall() if cursor.pgresult.status == psycopg.pq.ExecStatus.TUPLES_OK else []
        if planner:
            _set_config(cursor, restore)
    if connection.queries_logged:  # DEBUG, or a test capturing queries: logged as Django's cursor does
        connection.queries_log.append({"sql": sql, "time": f"{time.monotonic() - start:.3f}"})
    return rows


#: Planner settings (``execute_binary(planner=...)``) of a bulk statement that reaches its rows by
#: key only (wallets by id or player; thousands of them). The planner costs every page as a disk
#: read and may choose a sequential scan of the whole table, whose cost grows with the table,
#: where an index scan reaches only the rows asked for: ``enable_seqscan`` off. A statement joining
#: CTEs or arrays, which have no statistics, is estimated at millions of rows, for which PostgreSQL
#: would JIT-compile it, taking longer than running it: ``jit`` off.
BY_KEY = {"jit": "off", "enable_seqscan": "off"}

#: ``BY_KEY`` for a statement that JOINS the rows it reaches by key to another table by key (the
#: wallets of an array of players, a round's bets and their players): the planner, misjudging how
#: many rows the array or the round holds, may hash or merge the other table's every row (all
#: wallets of the currency, all players), a cost that grows with that table. Here each joined row
#: is found through an index (a nested loop). Not for a statement whose join cannot use an index
#: on the inner side (a CTE or an array joined to a table row by row scans it once per row).
JOINED_BY_KEY = {**BY_KEY, "enable_hashjoin": "off", "enable_mergejoin": "off"}


def _set_config(cursor, settings):
    """Set ``settings`` (``{name: value}``) for the rest of the transaction, in one round trip;
    returns their values before."""
    names = list(settings)
    cursor.execute("SELECT " + ", ".join("current_setting(%s), set_config(%s, %s, true)" for _ in names),
                   [x for name in names for x in (name, name, settings[name])])
    row = cursor.fetchone()
    return dict(zip(names, row[::2]))


def array_sql(name, values, sql_type, *, spread):
    """An array parameter named ``name`` for ``execute_binary``: ``(sql, params dict)``. Either one
    binary array (``%(name)b::bigint[]``, one parameter: any length, for bulk statements), or, with
    ``spread``, one parameter per element (``ARRAY[%(name_0)b::bigint, ...]::bigint[]``): the
    planner then knows the length even in a generic plan, so a prepared statement is planned
    once and not per call. Without ``spread``, values all equal (a bulk post's kinds, currencies,
    memos) go as that one value and the length (``array_fill``): nothing is encoded per element."""
    if spread:
        names = [f"{name}_{i}" for i in range(len(values))]
        placeholders = ", ".join(f"%({n})b::{sql_type}" for n in names)
        return f"ARRAY[{placeholders}]::{sql_type}[]", dict(zip(names, values))
    values = list(values)
    if len(values) > 1 and values[0] is not None and all(v == values[0] for v in values):
        return (f"array_fill(%({name})b::{sql_type}, ARRAY[%({name}_n)b::integer])",
                {name: values[0], f"{name}_n": len(values)})
    if sql_type in NUMBER_TYPES:
        return f"%({name})s::{sql_type}[]", {name: number_array(values)}
    return f"%({name})b::{sql_type}[]", {name: list(values)}


#: The SQL types ``number_array`` writes.
NUMBER_TYPES = ("bigint", "integer", "numeric")


def number_array(values):
    """``values`` (``int`` or finite ``Decimal``; None for a NULL element) as ONE PostgreSQL array
    literal (``"{1,2.50,NULL}"``), for a text placeholder cast to a ``NUMBER_TYPES`` array
    (``%s::numeric[]``). For bulk arrays of numbers: psycopg dumps each element of a list in
    Python, one by one (a ``Decimal`` or a None about ten times slower than its ``str``), while
    joining their ``str`` is much cheaper, and PostgreSQL parses the text as fast. A value that is
    not a number makes PostgreSQL refuse the statement."""
    return "{" + ",".join(["NULL" if v is None else str(v) for v in values]) + "}"


def values_list_rows(queryset, *, planner=None):
    """The rows of a ``.values_list()`` queryset as tuples, on PostgreSQL run with ``planner``
    settings (``execute_binary``; e.g. ``BY_KEY`` for a join reaching thousands of rows of a big
    table by key) inside a transaction; elsewhere, on another alias, or outside a transaction,
    the queryset's own rows."""
    if connection.vendor != "postgresql" or queryset.db != connection.alias or connection.get_autocommit():
        return list(queryset)
    return _compiled_rows(queryset, planner=planner)


def values_rows(queryset):
    """The rows of a ``.values()`` queryset (a list of dicts, as iterating it gives), on PostgreSQL
    run as a prepared statement: parsed and planned once per connection and query shape instead
    of per call (planning a list page's joins costs more than running them). For a query run often
    for a few rows (a page); on any other database, or another database alias than the one
    ``execute_binary`` runs on (a read replica), the queryset is simply iterated."""
    if connection.vendor != "postgresql" or queryset.db != connection.alias:
        return list(queryset)
    return [dict(zip(_names(queryset.query), row)) for row in _compiled_rows(queryset, prepare=True)]


def _compiled_rows(queryset, **options):
    """The rows (tuples, the fields' converters applied) of ``queryset`` compiled by Django and run
    by ``execute_binary(**options)``."""
    compiler = queryset.query.get_compiler(queryset.db)
    sql, params = compiler.as_sql()
    rows = execute_binary(sql, params, **options)
    converters = compiler.get_converters([column[0] for column in compiler.select[:compiler.col_count]])
    return list(compiler.apply_converters(rows, converters)) if converters else rows


def _names(query):
    """The names of a ``.values()`` query's columns, in their order."""
    return list(query.selected) if query.selected else [*query.extra_select, *query.values_select,
                                                          *query.annotation_select]


def shaped_rows(shape, build, values):
    """The rows of ``build(*values)`` (a ``.values()`` queryset, as ``values_rows`` gives them),
    for a read whose SQL differs from call to call only by ``values`` (ints, strings and aware
    datetimes, each passed to the database as it is: ``exact``, ``in`` and comparison lookups,
    a keyset's row comparison): on PostgreSQL its queryset is
    built and compiled once per process and ``shape`` (a key that tells apart every other
    difference of the SQL: the length of an ``in`` list, a slice), with stand-ins for ``values``,
    and then run as a prepared statement with the values in the stand-ins' places, since
    compiling a query with its joins costs more than running it for a page. Elsewhere (or on
    another database alias) it is built and run each time."""
    if connection.vendor != "postgresql":
        return list(build(*values))
    template = _TEMPLATES.get(shape)
    if template is None:
        stand_ins = [_stand_in(value, n) for n, value in enumerate(values)]
        queryset = build(*stand_ins)
        if queryset.db != connection.alias:
            return list(build(*values))
        compiler = queryset.query.get_compiler(queryset.db)
        sql, params = compiler.as_sql()
        places = [[i for i, param in enumerate(params) if param == stand_in] for stand_in in stand_ins]
        if not all(places):
            raise ValueError(f"{shape}: a value does not reach the SQL as it is")
        converters = compiler.get_converters([column[0] for column in compiler.select[:compiler.col_count]])
        template = _TEMPLATES[shape] = (sql, list(params), places, list(converters.items()), _names(queryset.query))
    sql, params, places, converters, names = template
    params = list(params)
    for value, where in zip(values, places):
        for i in where:
            params[i] = value
    rows = execute_binary(sql, params, prepare=True)
    if converters:
        rows = [list(row) for row in rows]
        for row in rows:
            for i, (functions, expression) in converters:
                for function in functions:
                    row[i] = function(row[i], expression, connection)
    return [dict(zip(names, row)) for row in rows]


#: ``shaped_rows``' compiled queries by shape.
_TEMPLATES = {}


def _stand_in(value, n):
    """The ``n``-th stand-in for ``value`` in a query compiled once: a value no row holds."""
    if isinstance(value, int) and not isinstance(value, bool):
        return -(2**62) - n
    if isinstance(value, str):
        return f"\x01stand-in {n}\x01"
    if isinstance(value, datetime) and value.tzinfo is not None:
        return datetime(1, 1, 1, tzinfo=UTC) + timedelta(microseconds=n)
    raise TypeError(f"no stand-in for {type(value).__name__} values")


def select_list(model, alias, names=None):
    """The select list of ``model``'s concrete columns, or of those whose field is in ``names``
    (in ``model``'s field order, which ``from_db`` expects)."""
    return ", ".join(f"{alias}.{connection.ops.quote_name(f.column)}" for f in model._meta.concrete_fields
                     if names is None or f.attname in names)


def instances(model, rows, names=None, *, shared=None):
    """Model instances of ``rows`` (tuples of the columns ``select_list(model, alias, names)`` lists),
    as a queryset makes them (loaded from the database, not ``adding``); the fields not in ``names``
    are deferred (loaded if read). ``shared``: ``{foreign key name: instance}`` every row points at
    (a wallet's ``currency``), each instance holding it as if it had been assigned. Each
    instance's values go straight into its ``__dict__``, as ``Model.__init__`` would leave them,
    without its per-field descriptor calls: thousands of instances (a settlement's wallets, a
    post's transactions) cost a fraction of ``from_db``'s. A model with ``pre_init``/``post_init``
    receivers is built by ``from_db``, which sends them."""
    alias = connection.alias  # read once: each read goes through a thread-local
    if signals.pre_init.has_listeners(model) or signals.post_init.has_listeners(model):
        built = [model.from_db(alias, names, row) for row in rows]
        for instance in built:
            for name, related in (shared or {}).items():
                setattr(instance, name, related)
        return built
    attnames = [f.attname for f in model._meta.concrete_fields if names is None or f.attname in names]
    cache = {model._meta.get_field(name).cache_name: related for name, related in (shared or {}).items()}
    new, state = model.__new__, ModelState
    built = []
    for row in rows:
        instance = new(model)
        values = instance.__dict__
        values.update(zip(attnames, row))
        values["_state"] = loaded = state()
        loaded.adding, loaded.db = False, alias
        if cache:
            loaded.fields_cache = dict(cache)
        built.append(instance)
    return built


def sql_type(field):
    """``field``'s PostgreSQL type without its modifiers (``varchar``, ``numeric``), for a cast: a
    cast to ``varchar(128)`` would cut a longer string where storing it in the column refuses it."""
    return re.sub(r"\(.*\)", "", field.db_type(connection))


def insert_columns(model, objs):
    """``(constants, arrays)``: the columns of ``objs`` (instances of ``model``; the primary key
    left out) for one INSERT whose rows come from ``unnest``: ``(quoted column, placeholder,
    value)`` of each column with one value for every row, sent as one parameter, and ``(quoted
    column, placeholder, values)`` of the others, one binary array each. The values are the
    instances' (``auto_now``/``auto_now_add`` stamped as ``bulk_create`` stamps them, a JSON
    field's value encoded as Django encodes it)."""
    constants, arrays = [], []
    for field in model._meta.concrete_fields:
        if field.primary_key:
            continue
        column = connection.ops.quote_name(field.column)
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            values = [field.pre_save(obj, True) for obj in objs]
        else:
            values = [getattr(obj, field.attname) for obj in objs]
        if field.get_internal_type() == "JSONField":
            values = [field.get_db_prep_save(value, connection) for value in values]
        if all(v == values[0] for v in values[1:]):
            constants.append((column, f"%b::{sql_type(field)}", values[0]))
        else:
            arrays.append((column, f"%b::{sql_type(field)}[]", values))
    return constants, arrays


def insert_rows(model, objs):
    """Insert ``objs`` (a list of unsaved instances of ``model``) as ``bulk_create`` does, and on
    any other database than PostgreSQL by it. On PostgreSQL in ONE statement: the values as the
    instances hold them (Python's types for the fields' types: ``Decimal``, aware ``datetime``,
    ``str``, ``int``; a JSON field's value encoded as Django encodes it), ``auto_now`` and
    ``auto_now_add`` stamped as ``bulk_create`` stamps them; a column with one value for every row
    sent as one parameter, the others as one binary array each (``unnest``), never a quoted
    parameter per value; in the caller's transaction. The instances get their primary keys, in order. Raises Django's
    ``IntegrityError`` on a constraint. Returns ``objs``."""
    if not objs:
        return objs
    if connection.vendor != "postgresql":
        model.objects.bulk_create(objs)
        return objs
    table, pk = connection.ops.quote_name(model._meta.db_table), model._meta.pk
    constants, arrays = insert_columns(model, objs)
    names = [c for c, _, _ in arrays]
    unnest = ", ".join(["%s::integer[]"] + [p for _, p, _ in arrays])  # the ordinals: one row has no array else
    rows = execute_binary(
        f"""INSERT INTO {table} ({", ".join(names + [c for c, _, _ in constants])})
            SELECT {", ".join(names + [p for _, p, _ in constants])}
            FROM unnest({unnest}) AS v({", ".join(["ordinal_"] + names)})
            ORDER BY ordinal_ RETURNING {connection.ops.quote_name(pk.column)}""",
        [v for _, _, v in constants] + [number_array(range(len(objs)))] + [v for _, _, v in arrays])
    for obj, (value,) in zip(objs, rows):
        setattr(obj, pk.attname, value)
        obj._state.adding, obj._state.db = False, connection.alias
    return objs
