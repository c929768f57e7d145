"""The ledger's wallet reads on PostgreSQL: each ONE statement with its arrays sent in binary
(``accounts.sql.execute_binary``), where the ORM would send thousands of quoted parameters.
``accounts.selectors`` and ``accounts.locks`` use them on PostgreSQL and the ORM elsewhere."""

from .models import Account, Player
from .sql import BY_KEY, execute_binary, instances, number_array, select_list

#: The columns of a wallet and its player that placing bets and posting stakes read; the others
#: are deferred, so that these hot paths do not read and parse them (timestamps above all).
WALLET_FIELDS = {"id", "kind", "operator_id", "currency_id", "player_id", "balance", "negative_flagged", "journal"}
PLAYER_FIELDS = {"id", "operator_id", "code", "game_code", "account_kind"}


def lock_wallets_by_code(currency, codes):
    """The wallets in ``currency`` (a ``Currency``) of the players whose game code is in ``codes``
    (a set of str), locked ``FOR UPDATE`` in primary-key order; each with its ``player`` and
    ``currency`` (the instance given) loaded. Returns a list of ``Account``; the fields outside
    ``WALLET_FIELDS`` and ``PLAYER_FIELDS`` are deferred."""
    width = len(WALLET_FIELDS)
    rows = execute_binary(
        f"""SELECT {select_list(Account, "a", WALLET_FIELDS)}, {select_list(Player, "p", PLAYER_FIELDS)}
            FROM {Account._meta.db_table} AS a JOIN {Player._meta.db_table} AS p ON p.id = a.player_id
            WHERE a.kind = %b::varchar AND a.currency_id = %b::varchar AND p.game_code = ANY(%b::varchar[])
            ORDER BY a.id FOR UPDATE OF a""",
        [Account.Kind.WALLET.value, currency.pk, list(codes)])
    wallets = instances(Account, [row[:width] for row in rows], WALLET_FIELDS, shared={"currency": currency})
    for wallet, player in zip(wallets, instances(Player, [row[width:] for row in rows], PLAYER_FIELDS)):
        wallet.player = player
    return wallets


def wallets(currency, player_ids):
    """The wallets in ``currency`` (a ``Currency``, set on each) of the players ``player_ids`` (ints),
    each found through the wallet index by its player whatever the planner's estimates: the
    LATERAL subquery (its LIMIT keeps it from being flattened into a join) is run once per id,
    so that a round with many winners never reads the whole wallet table, and a wallet table
    without statistics yet (a new database) is never scanned once per id. Returns a list of
    ``Account``; the fields outside ``WALLET_FIELDS`` are deferred."""
    rows = execute_binary(
        f"""SELECT a.* FROM unnest(%s::bigint[]) AS p(id) CROSS JOIN LATERAL (
              SELECT {select_list(Account, "a", WALLET_FIELDS)} FROM {Account._meta.db_table} AS a
              WHERE a.player_id = p.id AND a.kind = %b::varchar AND a.currency_id = %b::varchar LIMIT 1) AS a""",
        [number_array(player_ids), Account.Kind.WALLET.value, currency.pk], planner=BY_KEY)
    return instances(Account, rows, WALLET_FIELDS, shared={"currency": currency})
