"""Concurrent requests on PostgreSQL (real transactions, one connection per thread)."""

import threading
import time
from decimal import Decimal

import pytest
from django.db import connection, transaction
from rest_framework.test import APIClient

from accounts.models import LedgerTransaction
from settlement.voids import cancel
from tables.locks import lock_table
from tables.models import Round
from tables.studios import create_service_key
from tests.factories import BoundlessTableFactory, ClassicTableFactory, CurrencyFactory, PlayerFactory, RoundFactory
from tests.wallets.seamless import Answering, answering, seamless_operator
from wagering.models import Bet
from wagering.placement import place_bet
from wallets.models import WalletMovement

from .helpers import balance

pytestmark = pytest.mark.django_db(transaction=True)


def run_at_once(jobs):
    """Run the callables in threads released together; returns their results or exceptions."""
    barrier = threading.Barrier(len(jobs))
    results = [None] * len(jobs)

    def run(i, job):
        try:
            barrier.wait()
            results[i] = job()
        except Exception as e:  # noqa: BLE001 - the test inspects it
            results[i] = e
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, job)) for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def bet_job(round_id, key, player, stake="60.00", type="main"):
    return lambda: place_bet(round_id=round_id, key=key, player=player, type=type, stake=stake)


def test_two_bets_exceeding_the_balance_together_exactly_one_accepted():
    CurrencyFactory(code="EUR")
    player = PlayerFactory(funded="100.00")
    round_ = RoundFactory(table=BoundlessTableFactory())
    results = run_at_once([bet_job(round_.pk, "a", player.code), bet_job(round_.pk, "b", player.code, type="pairs")])
    errors = [r for r in results if isinstance(r, Exception)]
    assert len(errors) == 1 and errors[0].code == "insufficient_funds"
    assert Bet.objects.count() == 1 and balance(player) == Decimal("40.00")


def test_rules_8_two_stacked_bets_at_once_exactly_one_accepted():
    """The limits apply per player, position and bet type: two main bets of one player sent at
    once from two connections place one (the second waits for the wallet, then sees the first)."""
    CurrencyFactory(code="EUR")
    player = PlayerFactory(funded="100.00")
    round_ = RoundFactory(table=BoundlessTableFactory())
    results = run_at_once([bet_job(round_.pk, k, player.code, "10.00") for k in ("a", "b")])
    errors = [r for r in results if isinstance(r, Exception)]
    assert len(errors) == 1 and errors[0].code == "bet_stacked"
    assert Bet.objects.count() == 1 and balance(player) == Decimal("90.00")


def test_20_stacked_transfer_bets_at_once_take_one_stake():
    """The transfer half of the seamless test below: one stake posted, 19 refused as stacked."""
    CurrencyFactory(code="EUR")
    player = PlayerFactory(funded="1000.00")
    round_ = RoundFactory(table=BoundlessTableFactory())
    results = run_at_once([bet_job(round_.pk, f"k{i}", player.code, "10.00") for i in range(20)])
    assert sorted(getattr(r, "code", "placed") for r in results) == ["bet_stacked"] * 19 + ["placed"]
    assert LedgerTransaction.objects.filter(kind="stake").count() == 1 and balance(player) == Decimal("990.00")


def test_same_key_ten_times_at_once_is_one_bet_one_debit():
    CurrencyFactory(code="EUR")
    player = PlayerFactory(funded="100.00")
    round_ = RoundFactory(table=BoundlessTableFactory())
    results = run_at_once([bet_job(round_.pk, "same", player.code, "10.00") for _ in range(10)])
    assert not [r for r in results if isinstance(r, Exception)], results
    assert {r.bets[0].pk for r in results} == {Bet.objects.get().pk}
    assert sum(r.created for r in results) == 1
    assert LedgerTransaction.objects.filter(kind="stake").count() == 1 and balance(player) == Decimal("90.00")


def test_round_cancelled_while_bets_arrive_refunds_every_accepted_stake():
    """RULES 10: a void refunds every bet; no stake is lost whatever the interleaving."""
    CurrencyFactory(code="EUR")
    players = [PlayerFactory(funded="50.00") for _ in range(8)]
    round_ = RoundFactory(table=BoundlessTableFactory())
    jobs = [bet_job(round_.pk, f"k{i}", p.code, "10.00") for i, p in enumerate(players)]
    jobs.insert(4, lambda: cancel(round_id=round_.pk, reason="fault"))
    results = run_at_once(jobs)
    rejected = [r for r in results if isinstance(r, Exception)]
    assert all(r.code == "betting_closed" for r in rejected), rejected
    assert Bet.objects.exclude(state="refunded").count() == 0
    assert all(balance(p) == Decimal("50.00") for p in players)
    assert LedgerTransaction.objects.filter(kind="refund").count() == Bet.objects.count()


class _CountingCalls(Answering):
    """A seamless operator's wallet answering every call OK and noting each call's path (``/debit``...)."""

    body = b'{"status": "OK", "balance": "1000.00"}'

    def do_POST(self):
        self.calls.append(self.path.rsplit("/", 1)[-1])
        super().do_POST()


def _game_server_bet(round_, raw, key, player, seat):
    """A job posting one seamless seat or shared-hand bet of 10.00 with the service key ``raw``."""
    def job():
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        return client.post(f"/api/game/v1/rounds/{round_.pk}/bets/", {
            "key": key, "player": player.game_code, "type": "main", "stake": "10.00", "seat": seat}, format="json")
    return job


@pytest.mark.parametrize("factory, seat", [(BoundlessTableFactory, None), (ClassicTableFactory, 3)])
def test_20_stacked_seamless_bets_at_once_send_one_debit_and_no_rollback(factory, seat):
    """RULES 6, 7, 8: of 20 game-server posts at once of one seamless player's bet on one position
    and bet type, each with its own key, one is placed and the 19 others are refused as stacked
    before any debit is sent: the operator's wallet sees one debit and no rollback."""
    CurrencyFactory(code="EUR")
    calls = []
    with answering(_CountingCalls.body, _CountingCalls, calls=calls) as url:
        player = seamless_operator("sea", url, players=("f1",))[1]["f1"]
        table = factory()
        round_ = RoundFactory(table=table)
        _, raw, _ = create_service_key(studio=table.studio, name="stacking")
        answers = run_at_once([_game_server_bet(round_, raw, f"stack-{i}", player, seat) for i in range(20)])
    assert sorted(a.status_code for a in answers) == [201] + [409] * 19, [a.content[:200] for a in answers]
    # a seat bet already placed on the seat is refused as such (seat_taken), as one bet alone would be
    assert {a.json()["code"] for a in answers if a.status_code == 409} <= {"bet_stacked", "seat_taken"}
    assert calls == ["debit"]
    assert Bet.objects.filter(round=round_).count() == 1
    assert list(WalletMovement.objects.values_list("call", "state")) == [("debit", "ok")]


def test_10_seamless_players_at_once_on_one_empty_seat_send_one_debit_and_no_rollback():
    """RULES 6: a seat is one player's. Of 10 seamless players' seat bets at once on one empty seat,
    one is placed and the 9 others are refused ``seat_taken`` before any debit of theirs is sent:
    a live stake debit claims its seat for every player."""
    CurrencyFactory(code="EUR")
    calls, codes = [], tuple(f"s{i}" for i in range(10))
    with answering(_CountingCalls.body, _CountingCalls, calls=calls) as url:
        players = seamless_operator("sea", url, players=codes)[1]
        table = ClassicTableFactory()
        round_ = RoundFactory(table=table)
        _, raw, _ = create_service_key(studio=table.studio, name="seat-race")
        answers = run_at_once([_game_server_bet(round_, raw, f"race-{c}", players[c], 3) for c in codes])
    assert sorted(a.status_code for a in answers) == [201] + [409] * 9, [a.content[:200] for a in answers]
    assert {a.json()["code"] for a in answers if a.status_code == 409} == {"seat_taken"}
    assert calls == ["debit"]
    assert list(WalletMovement.objects.values_list("call", "state")) == [("debit", "ok")]


def _lock_waiters():
    """How many other backends of this database wait for a lock."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND wait_event_type = 'Lock'")
        return cursor.fetchone()[0]


@pytest.mark.postgresql  # waiters are seen in pg_stat_activity; SQLite runs one writer at a time anyway
def test_two_identical_opens_at_once_open_one_round_answered_201_then_200():
    """Issue 20, item 13: the answer to an open says whether that call created the round, decided
    under the table's lock: both calls pass any look made before it, then one creates and the
    other finds the round."""
    CurrencyFactory(code="EUR")
    table = BoundlessTableFactory()
    _, raw, _ = create_service_key(studio=table.studio, name="race")
    holding, release, answers = threading.Event(), threading.Event(), []

    def hold_the_table():
        try:
            with transaction.atomic():
                lock_table(table)
                holding.set()
                release.wait(10)
        finally:
            connection.close()

    def open_it():
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        try:
            answers.append(client.post(f"/api/game/v1/tables/{table.code}/rounds/",
                                       {"external_id": "SAME", "shoe": 1, "burn_count": 2}, format="json").status_code)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_the_table)
    holder.start()
    assert holding.wait(10)
    openers = [threading.Thread(target=open_it) for _ in range(2)]
    for t in openers:
        t.start()
    deadline = time.monotonic() + 10
    while _lock_waiters() < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    release.set()
    for t in (holder, *openers):
        t.join()
    assert sorted(answers) == [200, 201]
    assert Round.objects.filter(table=table, external_id="SAME").count() == 1
