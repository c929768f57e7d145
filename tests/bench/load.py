"""The shared benchmark data set (``make bench-admin``, ``make bench-api``): a million settled bets
loaded with plain SQL (``INSERT … SELECT generate_series``), reused when already there.
``ensure_bets(n)`` is what a benchmark calls.

Shape: one boundless table ``bench-bets`` in EUR, ``PLAYERS`` players (``bench-p-<i>``) with a
wallet each, rounds of ``PER_ROUND`` main bets of 10.00 (one a minute, the latest now; a round's
bets share its placing time: ties everywhere). Bet 0 of every round is the heavy player's
(``bench-p-1``: 100,000 of a million), the others go round-robin to the rest (~90 each). Each round
is SETTLED with a valid round record (dealer T♣ 7♠, players 8♣ 8♥ standing: every bet lost,
returned 0) so a bet's page can replay it."""

from dataclasses import dataclass

TABLE = "bench-bets"
PLAYERS = 10_000
PER_ROUND = 10


@dataclass
class Loaded:
    """What is loaded: the ``table`` (a ``Table``), ``bets`` (count), a ``player_code`` with ~90
    bets, the ``heavy_code`` of the player with a tenth of them, and ``sample_bet_ids`` spread over
    the data set."""

    table: object
    bets: int
    player_code: str
    heavy_code: str
    sample_bet_ids: list


def ensure_bets(n=1_000_000):
    """Load ``n`` bets (rounded up to whole rounds) unless table ``bench-bets`` already holds at
    least ``n``; returns ``Loaded``. Prints what it did."""
    import time

    from django.db import connection, transaction

    from accounts.models import Currency
    from tables.models import Table

    Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})
    table, _ = Table.objects.get_or_create(code=TABLE, defaults={"name": "Bench load", "variant": "boundless",
                                                                 "currency_id": "EUR", "seats": None})
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM wagering_bet WHERE table_id = %s", [table.pk])
        have = cur.fetchone()[0]
    if have < n:
        start = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cur:
            _load(cur, table.pk, -(-(n - have) // PER_ROUND), have // PER_ROUND)
        with connection.cursor() as cur:
            cur.execute("ANALYZE")
        print(f"loaded {n - have:,} bets in {time.perf_counter() - start:.0f} s")
    with connection.cursor() as cur:
        cur.execute("""SELECT id FROM wagering_bet WHERE table_id = %s AND id %% 99991 = 0 ORDER BY id LIMIT 50""",
                    [table.pk])
        sample = [row[0] for row in cur.fetchall()]
        cur.execute("SELECT count(*) FROM wagering_bet WHERE table_id = %s", [table.pk])
        total = cur.fetchone()[0]
    return Loaded(table=table, bets=total, player_code="bench-p-2", heavy_code="bench-p-1", sample_bet_ids=sample)


def _load(cur, table_id, rounds, first_round):
    """Insert players (once), then ``rounds`` rounds after the ``first_round`` already there."""
    from accounts.services import default_operator

    operator_id = default_operator().pk
    cur.execute("SELECT count(*) FROM accounts_player WHERE code LIKE 'bench-p-%%'")
    if cur.fetchone()[0] < PLAYERS:
        cur.execute("""INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email,
                                              is_staff, is_active, date_joined)
                       SELECT '!', false, 'bench-p-' || i, '', '', '', false, true, now()
                       FROM generate_series(1, %s) i""", [PLAYERS])
        # players of the default operator, whose game code is the code itself
        cur.execute("""INSERT INTO accounts_player (user_id, operator_id, code, game_code, account_kind, display_name,
                                                    created_at)
                       SELECT id, %s, username, username, 'real', '', now() FROM auth_user
                       WHERE username LIKE 'bench-p-%%'""", [operator_id])
        cur.execute("""INSERT INTO accounts_account (kind, operator_id, currency_id, player_id, name, balance,
                                                     negative_flagged, journal, created_at)
                       SELECT 'wallet', %s, 'EUR', id, '', 1000, false, false, now() FROM accounts_player
                       WHERE code LIKE 'bench-p-%%'""", [operator_id])
    cur.execute("""INSERT INTO tables_shoe (table_id, sequence, shuffled_at, burn_count, rounds_dealt, cut_card_out)
                   SELECT %s, 1, now(), 0, 0, false WHERE NOT EXISTS
                   (SELECT 1 FROM tables_shoe WHERE table_id = %s AND sequence = 1)""", [table_id, table_id])
    cur.execute("SELECT id FROM tables_shoe WHERE table_id = %s AND sequence = 1", [table_id])
    shoe_id = cur.fetchone()[0]
    last = first_round + rounds
    cur.execute("""INSERT INTO tables_round (table_id, shoe_id, shoe_round, external_id, state, failure_reason,
                                             pay_tables, opened_at, closed_at, resulted_at, settled_at)
                   SELECT %s, %s, i, 'BL-' || i, 'settled', '', '{}'::jsonb, now() - (%s - i) * interval '1 minute',
                          now() - (%s - i) * interval '1 minute', now() - (%s - i) * interval '1 minute',
                          now() - (%s - i) * interval '1 minute'
                   FROM generate_series(%s, %s) i""",
                [table_id, shoe_id, last, last, last, last, first_round + 1, last])
    cur.execute("""CREATE TEMP TABLE bench_players ON COMMIT DROP AS
                   SELECT substr(code, 9)::int - 1 AS n, id, code FROM accounts_player
                   WHERE code LIKE 'bench-p-%%'""")
    cur.execute("""INSERT INTO wagering_bet (round_id, table_id, currency_id, player_id, type, seat, stake, state,
                                             outcome, returned, idempotency_key, record_id, follow_double,
                                             follow_split, placed_at, settled_at)
                   SELECT r.id, r.table_id, 'EUR', p.id, 'main', NULL, 10, 'settled', 'lose', 0,
                          'bench:' || r.id || ':' || k, 'b' || k, false, false, r.opened_at, r.settled_at
                   FROM tables_round r CROSS JOIN generate_series(0, %(per)s - 1) k
                   JOIN bench_players p ON p.n = CASE WHEN k = 0 THEN 0
                        ELSE 1 + (r.shoe_round * (%(per)s - 1) + k) %% (%(players)s - 1) END
                   WHERE r.table_id = %(table)s AND r.shoe_round > %(first)s""",
                {"per": PER_ROUND, "players": PLAYERS, "table": table_id, "first": first_round})
    # Statistics of the rows just written (this transaction's: ANALYZE sees them): without them the
    # planner takes the tables for empty and joins a million bets to their rounds row by row.
    cur.execute("ANALYZE tables_round, wagering_bet, accounts_player")
    cur.execute("""UPDATE tables_round r SET record = jsonb_build_object(
                       'format', 'round-record/1', 'variant', 'boundless', 'round', r.external_id,
                       'shoe_round', r.shoe_round, 'currency', 'EUR', 'dealer', '["TC", "7S"]'::jsonb,
                       'player_cards', '["8C", "8H"]'::jsonb, 'bets', s.bets)
                   FROM (SELECT b.round_id, jsonb_agg(jsonb_build_object('id', b.record_id, 'player', p.code,
                                'type', 'main', 'stake', '10.00', 'actions', '["stand"]'::jsonb) ORDER BY b.id) AS bets
                         FROM wagering_bet b JOIN accounts_player p ON p.id = b.player_id
                         JOIN tables_round r2 ON r2.id = b.round_id
                         WHERE r2.table_id = %s AND r2.shoe_round > %s GROUP BY b.round_id) s
                   WHERE s.round_id = r.id""", [table_id, first_round])
