"""The shared benchmark data set (``make bench-admin``, ``make bench-api``): settled bets loaded with
plain SQL (``INSERT … SELECT generate_series``) as the rows the platform writes for them, reused
when already there. ``ensure_bets(n)`` is what a benchmark calls, ``sizes(n)`` the data-set sizes
a run measures at, ``scale_rows`` its figures beside those at ``REFERENCE`` bets.

Shape: one boundless table ``bench-bets`` in EUR, ``PLAYERS`` players of the default operator
(``bench-p-<i>``), each with a wallet funded by one deposit; rounds of ``PER_ROUND`` main bets of
10.00 (one a minute, the latest at the time of their load; a round's bets share its placing time:
ties everywhere). Bet 0 of every round is the heavy player's (``bench-p-1``: a tenth of the bets),
the others go round-robin to the rest. Every player stands on the shared 8♣ 8♥; the rounds
alternate between two records: dealer T♣ 7♠ (every bet lost, returned 0) and dealer T♣ 6♠ 9♦ (the
dealer busts, every bet won, returned 20.00).

Per round, the rows the services write: the round (SETTLED, its record and stamps); its timeline
(``opened``, one ``bet_placed`` per bet, ``betting_closed``, ``resulted``, ``settled``); its one
``SettlementDetail`` (the engine's detail of its bets, ``settlement.details``) and its bets,
settled and pointing at it; in the ledger, each bet's ``stake:<bet>`` and, when won,
``payout:<bet>``, the wallet's entries with their running ``balance_after``, and the wallets'
balances. Loaded ``BATCH`` rounds per transaction, so an interrupted load keeps whole rounds; once
loaded, the rollups of the loaded days are rebuilt from the bets (``wagering.rollups.rebuild``), as
settlement would have kept them."""

import time
from dataclasses import dataclass

from tests.bench.common import SMOKE, recalled, remember, sized

TABLE = "bench-bets"
PLAYERS = sized(10_000, 100)
PER_ROUND = 10
STAKE = 10
DEPOSIT = 100_000
BATCH = 100_000
#: The data-set size every larger one is compared with (``scale_rows``).
REFERENCE = sized(1_000_000, 1_000)
#: The round records' dealer cards: even rounds lose (17 against 16), odd rounds win (the dealer busts).
DEALERS = (["TC", "7S"], ["TC", "6S", "9D"])
PLAYER_CARDS = ["8C", "8H"]


@dataclass
class Loaded:
    """What is loaded: the ``table`` (a ``Table``), ``bets`` (count), a ``player_code`` with
    ~``bets / PLAYERS`` bets, the ``heavy_code`` of the player with a tenth of them, and
    ``sample_bet_ids`` spread over the data set."""

    table: object
    bets: int
    player_code: str
    heavy_code: str
    sample_bet_ids: list


def sizes(n):
    """The sizes (bets) a run asked for ``n`` bets measures at, loading between them: ``[REFERENCE,
    n]`` when the data set must grow to ``n`` from at most ``REFERENCE`` bets (the reference figures
    are measured first, on the same code), else ``[n]``."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT to_regclass('wagering_bet') IS NOT NULL")
        have = 0
        if cur.fetchone()[0]:
            cur.execute("SELECT count(*) FROM wagering_bet b JOIN tables_table t ON t.id = b.table_id "
                        "WHERE t.code = %s", [TABLE])
            have = cur.fetchone()[0]
    return [REFERENCE, n] if REFERENCE < n and have <= REFERENCE < n and have < n else [n]


def scale_rows(benchmark, loaded, figures, promised, limit=1.2):
    """Keep ``figures`` (``{name: value}``, milliseconds per request) measured over ``loaded``
    (``common.remember``) and compare them with the same figures at ``REFERENCE`` bets (the latest
    kept). Returns ``(title, rows for common.report, ok)``: per figure its value at ``REFERENCE``,
    here, and the ratio; ``ok`` unless a figure named in ``promised`` grew more than ``limit``
    times. No rows at ``REFERENCE`` itself or when nothing was kept there."""
    remember(benchmark, loaded.bets, figures)
    reference = recalled(benchmark, REFERENCE) if loaded.bets > REFERENCE else {}
    rows, ok, kept = [], True, set()
    for name, value in figures.items():
        if name not in reference:
            continue
        before, version, at = reference[name]
        kept.add(f"{version} at {at:%Y-%m-%d %H:%M}")
        grew = name in promised and before > 0 and value / before > limit
        ok &= not grew
        rows.append((name, value / before if before > 0 else float("nan"),
                     f"x  ({before:.2f} -> {value:.2f} ms)" + (f"  promise: <= {limit}" if name in promised else "")
                     + ("  NOT KEPT" if grew else "")))
    title = (f"cost per request against the size of the data set: {REFERENCE:,} -> {loaded.bets:,} bets "
             f"(the {REFERENCE:,}-bet figures measured by {', '.join(sorted(kept))})")
    return title, rows, ok


def ensure_bets(n=1_000_000):
    """Load ``n`` bets (rounded up to whole rounds) unless table ``bench-bets`` already holds at
    least ``n``; returns ``Loaded``. Prints what it did."""
    from django.db import connection, transaction

    from accounts.models import Currency
    from accounts.services import cashier_account, default_operator, house_account
    from tables.models import Table

    eur, _ = Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})
    table, _ = Table.objects.get_or_create(code=TABLE, defaults={"name": "Bench load", "variant": "boundless",
                                                                 "currency_id": "EUR", "seats": None})
    operator = default_operator()
    accounts = {"house": house_account(name=table.house_name, currency=eur, operator=operator).pk,
                "cashier": cashier_account(currency=eur, operator=operator).pk, "operator": operator.pk}
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM wagering_bet WHERE table_id = %s", [table.pk])
        have = cur.fetchone()[0]
    if have < n:
        start = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cur:
            _players(cur, accounts)
        details = _details(table)
        done, last = have // PER_ROUND, -(-n // PER_ROUND)
        while done < last:
            batch = min(BATCH, last - done)
            with transaction.atomic(), connection.cursor() as cur:
                _rounds(cur, table.pk, done, batch, last, details, accounts)
            done += batch
            if not SMOKE:
                print(f"  loaded {done * PER_ROUND:,} of {last * PER_ROUND:,} bets "
                      f"({time.perf_counter() - start:.0f} s)", flush=True)
        with connection.cursor() as cur:
            cur.execute("VACUUM (ANALYZE) wagering_bet, tables_round, tables_roundevent, accounts_ledgertransaction, "
                        "accounts_ledgerentry, accounts_account, settlement_settlementdetail")
        print(f"loaded {last * PER_ROUND - have:,} bets in {time.perf_counter() - start:.0f} s")
        start = time.perf_counter()
        _rebuild_rollups(table, operator)
        print(f"rebuilt their rollups in {time.perf_counter() - start:.0f} s")
    with connection.cursor() as cur:
        cur.execute("""SELECT id FROM wagering_bet WHERE table_id = %s AND id %% 99991 = 0 ORDER BY id LIMIT 50""",
                    [table.pk])
        sample = [row[0] for row in cur.fetchall()]
        if not sample:  # a small data set
            cur.execute("SELECT id FROM wagering_bet WHERE table_id = %s ORDER BY id LIMIT 50", [table.pk])
            sample = [row[0] for row in cur.fetchall()]
        cur.execute("SELECT count(*) FROM wagering_bet WHERE table_id = %s", [table.pk])
        total = cur.fetchone()[0]
    return Loaded(table=table, bets=total, player_code="bench-p-2", heavy_code="bench-p-1", sample_bet_ids=sample)


def _rebuild_rollups(table, operator):
    """Rebuild ``operator``'s rollups of the days ``table``'s bets were placed on."""
    from django.db import connection
    from django.db.models import Max, Min
    from django.utils import timezone

    from wagering.models import Bet
    from wagering.rollups import rebuild

    days = Bet.objects.filter(table=table).aggregate(first=Min("placed_at"), last=Max("placed_at"))
    rebuild(day_from=timezone.localtime(days["first"], operator.time_zone).date(),
            day_to=timezone.localtime(days["last"], operator.time_zone).date(), operators=[operator])
    with connection.cursor() as cur:
        cur.execute("ANALYZE wagering_dailyrollup, wagering_dailyplayer, wagering_dailyround")


def _details(table):
    """``[detail JSON text]`` by record (``DEALERS``' order): what settlement stores for a bet of it."""
    import json

    from settlement.details import distinct_details
    from tables.engine import settle

    texts = []
    for dealer in DEALERS:
        record = {"format": "round-record/1", "variant": "boundless", "round": "R", "shoe_round": 1,
                  "currency": "EUR", "dealer": dealer, "player_cards": PLAYER_CARDS,
                  "bets": [{"id": "b", "player": "p", "type": "main", "stake": f"{STAKE}.00", "actions": ["stand"]}]}
        (detail,), _ = distinct_details(settle(record, rules=table.rules(), minor_units=2).bets.values())
        texts.append(json.dumps(detail))
    return texts


def _players(cur, accounts):
    """Insert the players, their wallets and their deposits, unless there."""
    cur.execute("SELECT count(*) FROM accounts_player WHERE code LIKE 'bench-p-%%'")
    if cur.fetchone()[0] >= PLAYERS:
        return
    cur.execute("""INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email,
                                          is_staff, is_active, date_joined)
                   SELECT '!', false, 'bench-p-' || i, '', '', '', false, true, now()
                   FROM generate_series(1, %s) i""", [PLAYERS])
    cur.execute("""INSERT INTO accounts_player (user_id, operator_id, code, game_code, account_kind, display_name,
                                                created_at)
                   SELECT id, %(operator)s, username, username, 'real', '', now() FROM auth_user
                   WHERE username LIKE 'bench-p-%%'""", accounts)
    cur.execute("""INSERT INTO accounts_account (kind, operator_id, currency_id, player_id, name, balance,
                                                 negative_flagged, journal, created_at)
                   SELECT 'wallet', %(operator)s, 'EUR', id, '', %(deposit)s, false, false, now() FROM accounts_player
                   WHERE code LIKE 'bench-p-%%'""", {**accounts, "deposit": DEPOSIT})
    cur.execute("""WITH t AS (INSERT INTO accounts_ledgertransaction (key, kind, currency_id, memo, created_at)
                              SELECT 'bench-deposit:' || a.id, 'deposit', 'EUR', '', now()
                              FROM accounts_account a JOIN accounts_player p ON p.id = a.player_id
                              WHERE p.code LIKE 'bench-p-%%' ORDER BY a.id RETURNING id, key)
                   INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after)
                   SELECT t.id, e.account, e.amount, e.balance_after
                   FROM t CROSS JOIN LATERAL (VALUES (0, %(cashier)s, -%(deposit)s, NULL),
                                                     (1, substr(t.key, 15)::bigint, %(deposit)s, %(deposit)s))
                        AS e(n, account, amount, balance_after)
                   ORDER BY t.id, e.n""", {**accounts, "deposit": DEPOSIT})


def _rounds(cur, table_id, done, count, last, details, accounts):
    """Insert rounds ``done + 1`` to ``done + count`` (of ``last``) with everything the platform
    writes for them (see the module docstring)."""
    from tables.models import rules_version_now

    params = {"table": table_id, "first": done, "upto": done + count, "last": last, "per": PER_ROUND,
              "players": PLAYERS, "stake": STAKE, "lost": details[0], "won": details[1],
              "rules_version": rules_version_now(), **accounts}
    cur.execute("""INSERT INTO tables_shoe (table_id, sequence, shuffled_at, burn_count, rounds_dealt, cut_card_out)
                   SELECT %(table)s, 1, now(), 2, 0, false WHERE NOT EXISTS
                   (SELECT 1 FROM tables_shoe WHERE table_id = %(table)s AND sequence = 1)""", params)
    cur.execute("""UPDATE tables_shoe SET rounds_dealt = %(upto)s WHERE table_id = %(table)s AND sequence = 1
                   RETURNING id""", params)
    params["shoe"] = cur.fetchone()[0]
    cur.execute("""CREATE TEMP TABLE bench_rounds ON COMMIT DROP AS
                   WITH r AS (INSERT INTO tables_round (table_id, shoe_id, shoe_round, external_id, state,
                                                        failure_reason, pay_tables, rules_version, opened_at,
                                                        closed_at, resulted_at, settled_at)
                              SELECT %(table)s, %(shoe)s, i, 'BL-' || i, 'settled', '', '{}'::jsonb,
                                     %(rules_version)s, at, at, at, at
                              FROM generate_series(%(first)s + 1, %(upto)s) i,
                                   LATERAL (SELECT now() - (%(last)s - i) * interval '1 minute' AS at) t
                              ORDER BY i RETURNING id, shoe_round, external_id, opened_at)
                   SELECT r.*, r.shoe_round %% 2 = 1 AS won FROM r""", params)
    cur.execute("""CREATE TEMP TABLE bench_players ON COMMIT DROP AS
                   SELECT substr(p.code, 9)::int - 1 AS n, p.id, p.code, a.id AS wallet, a.balance
                   FROM accounts_player p JOIN accounts_account a ON a.player_id = p.id AND a.kind = 'wallet'
                   WHERE p.code LIKE 'bench-p-%%'""")
    cur.execute("""CREATE TEMP TABLE bench_details ON COMMIT DROP AS
                   WITH d AS (INSERT INTO settlement_settlementdetail (round_id, correction, detail, settled_at)
                              SELECT id, 0, (CASE WHEN won THEN %(won)s ELSE %(lost)s END)::jsonb, opened_at
                              FROM bench_rounds ORDER BY id RETURNING id, round_id)
                   SELECT * FROM d""", params)
    cur.execute("""CREATE TEMP TABLE bench_new_bets ON COMMIT DROP AS
                   WITH b AS (INSERT INTO wagering_bet (round_id, table_id, currency_id, player_id, type, seat, stake,
                                                        state, outcome, returned, idempotency_key, record_id,
                                                        follow_double, follow_split, placed_at, settled_at,
                                                        settlement_id)
                              SELECT r.id, %(table)s, 'EUR', p.id, 'main', NULL, %(stake)s, 'settled',
                                     CASE WHEN r.won THEN 'win' ELSE 'lose' END,
                                     CASE WHEN r.won THEN 2 * %(stake)s ELSE 0 END,
                                     'bench:' || r.id || ':' || k, 'b' || k, false, false, r.opened_at, r.opened_at,
                                     d.id
                              FROM bench_rounds r JOIN bench_details d ON d.round_id = r.id
                              CROSS JOIN generate_series(0, %(per)s - 1) k
                              JOIN bench_players p ON p.n = CASE WHEN k = 0 THEN 0
                                   ELSE 1 + (r.shoe_round * (%(per)s - 1) + k) %% (%(players)s - 1) END
                              ORDER BY r.id, k
                              RETURNING id, round_id, player_id, record_id, stake, returned, placed_at)
                   SELECT b.*, p.code, p.wallet FROM b JOIN bench_players p ON p.id = b.player_id""", params)
    cur.execute("ANALYZE bench_rounds, bench_players, bench_details, bench_new_bets")  # no autovacuum on these
    cur.execute("""UPDATE tables_round r SET record = jsonb_build_object(
                       'format', 'round-record/1', 'variant', 'boundless', 'round', r.external_id,
                       'shoe_round', r.shoe_round, 'currency', 'EUR',
                       'dealer', CASE WHEN n.won THEN '["TC", "6S", "9D"]' ELSE '["TC", "7S"]' END::jsonb,
                       'player_cards', '["8C", "8H"]'::jsonb, 'bets', s.bets)
                   FROM bench_rounds n JOIN (
                       SELECT round_id, jsonb_agg(jsonb_build_object('id', record_id, 'player', code, 'type', 'main',
                                                                     'stake', stake::numeric(20, 2)::text,
                                                                     'actions', '["stand"]'::jsonb) ORDER BY id) AS bets
                       FROM bench_new_bets GROUP BY round_id) s ON s.round_id = n.id
                   WHERE r.id = n.id""")
    cur.execute("""INSERT INTO tables_roundevent (round_id, kind, actor, payload, created_at)
                   SELECT round_id, kind, actor, payload, at FROM (
                       SELECT id AS round_id, 0 AS n, 'opened' AS kind, 'game-server:bench' AS actor,
                              jsonb_build_object('shoe', 1, 'shoe_round', shoe_round) AS payload, opened_at AS at
                       FROM bench_rounds
                       UNION ALL
                       SELECT round_id, 1, 'bet_placed', 'game-server:bench',
                              jsonb_build_object('bet', id, 'record_id', record_id, 'player', code, 'type', 'main',
                                                 'seat', NULL, 'stake', stake::numeric(20, 2)::text), placed_at
                       FROM bench_new_bets
                       UNION ALL
                       SELECT id, 2, 'betting_closed', 'game-server:bench',
                              jsonb_build_object('accepted', %(per)s, 'refunded', 0), opened_at FROM bench_rounds
                       UNION ALL
                       SELECT id, 3, 'resulted', 'game-server:bench', '{"cut_card_out": false}'::jsonb, opened_at
                       FROM bench_rounds
                       UNION ALL
                       SELECT id, 4, 'settled', 'system',
                              jsonb_build_object('correction', 0, 'bets', %(per)s,
                                                 'staked', (%(per)s * %(stake)s)::numeric(20, 2)::text,
                                                 'returned', (CASE WHEN won THEN 2 * %(per)s * %(stake)s ELSE 0 END)
                                                             ::numeric(20, 2)::text), opened_at
                       FROM bench_rounds) e
                   ORDER BY round_id, n""", params)
    # The wallets' movements in order (each bet's stake, then its payout) with the running balance.
    cur.execute("""CREATE TEMP TABLE bench_moves ON COMMIT DROP AS
                   SELECT b.id AS bet, m.n, m.key, m.kind, b.wallet, m.amount, b.placed_at AS at,
                          p.balance + sum(m.amount) OVER (PARTITION BY b.wallet ORDER BY b.id, m.n) AS balance_after
                   FROM bench_new_bets b JOIN bench_players p ON p.id = b.player_id
                   CROSS JOIN LATERAL (VALUES (0, 'stake:' || b.id, 'stake', -b.stake),
                                              (1, 'payout:' || b.id, 'payout', b.returned)) AS m(n, key, kind, amount)
                   WHERE m.amount <> 0""")
    cur.execute("ANALYZE bench_moves")
    cur.execute("""WITH t AS (INSERT INTO accounts_ledgertransaction (key, kind, currency_id, memo, created_at)
                              SELECT key, kind, 'EUR', '', at FROM bench_moves ORDER BY bet, n
                              RETURNING id, key)
                   INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after)
                   SELECT t.id, e.account, e.amount, e.balance_after
                   FROM t JOIN bench_moves m USING (key)
                   CROSS JOIN LATERAL (VALUES (%(house)s::bigint, -m.amount, NULL::numeric),
                                              (m.wallet, m.amount, m.balance_after))
                        AS e(account, amount, balance_after)
                   ORDER BY t.id, e.amount""", params)  # each posting's debit (its source) first
    cur.execute("""UPDATE accounts_account a SET balance = m.balance
                   FROM (SELECT DISTINCT ON (wallet) wallet, balance_after AS balance FROM bench_moves
                         ORDER BY wallet, bet DESC, n DESC) m
                   WHERE a.id = m.wallet""")
