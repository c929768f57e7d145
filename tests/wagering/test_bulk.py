"""``place_bets``'s bulk writes (``wagering.pg`` on PostgreSQL, the ORM elsewhere): the rows and
the timeline they leave, and a unique key taken by a concurrent transaction."""

import threading
import time
from decimal import Decimal

import pytest
from django.db import connection, transaction

from accounts.exceptions import IdempotencyConflict
from accounts.models import LedgerTransaction
from tables.models import RoundEvent
from tests.factories import BoundlessTableFactory, PlayerFactory, PremiumTableFactory, RoundFactory
from wagering.models import Bet
from wagering.placement import place_bet, place_bets

from .helpers import balance, sit


@pytest.mark.django_db
def test_batch_writes_bets_in_order_then_one_bet_placed_event_each_after_the_rejections(eur):
    round_ = RoundFactory(table=BoundlessTableFactory())
    rich, poor = PlayerFactory(funded="100.00"), PlayerFactory(funded="1.00")
    outcomes = place_bets(round_id=round_.pk, actor="game-server:gs", bets=[
        {"key": "a", "player": rich.code, "type": "main", "stake": "10.00"},
        {"key": "b", "player": poor.code, "type": "main", "stake": "10.00"},
        {"key": "c", "player": rich.code, "type": "bust_bonus", "stake": "20.00", "record_id": "bet-c"}])
    placed = [o.bets[0] for o in outcomes if o.created]
    assert outcomes[1].error.code == "insufficient_funds"
    assert [b.pk for b in placed] == sorted(b.pk for b in placed)
    for bet in placed:
        stored = Bet.objects.get(pk=bet.pk)
        assert (stored.table_id, stored.currency_id, stored.state, stored.placed_at) == \
            (round_.table_id, "EUR", Bet.State.PLACED, bet.placed_at)
        assert not bet._state.adding and bet.player.code == rich.code
    events = list(RoundEvent.objects.filter(round=round_).exclude(kind="opened").order_by("id"))
    assert [e.kind for e in events] == ["bet_rejected", "bet_placed", "bet_placed"]
    assert [e.payload for e in events[1:]] == [
        {"bet": placed[0].pk, "record_id": "a", "player": rich.code, "type": "main", "seat": None, "stake": "10.00"},
        {"bet": placed[1].pk, "record_id": "bet-c", "player": rich.code, "type": "bust_bonus", "seat": None,
         "stake": "20.00"}]
    assert {e.actor for e in events} == {"game-server:gs"}
    assert set(LedgerTransaction.objects.filter(kind="stake").values_list("key", flat=True)) == \
        {f"stake:{b.pk}" for b in placed}
    assert balance(rich) == Decimal("70.00") and balance(poor) == Decimal("1.00")


@pytest.mark.django_db
def test_premium_mirror_and_seat_events_in_order(eur):
    table = PremiumTableFactory()
    round_ = RoundFactory(table=table)
    player = PlayerFactory(funded="100.00")
    sit(table, 2, player)
    outcome = place_bet(round_id=round_.pk, key="m", player=player.code, type="main", stake="10.00", seat=1)
    assert [(b.seat, b.idempotency_key) for b in outcome.bets] == [(1, "m"), (2, "m#mirror")]
    events = list(RoundEvent.objects.filter(round=round_).exclude(kind="opened").order_by("id"))
    assert [e.kind for e in events] == ["seated", "bet_placed", "bet_placed"]
    assert [e.payload["seat"] for e in events[1:]] == [1, 2]


def _waiting_for_a_lock():
    """True once another backend of this database waits for a lock."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND wait_event_type = 'Lock'")
        return cursor.fetchone()[0] > 0


@pytest.mark.postgresql  # two transactions at once: SQLite runs one writer at a time
@pytest.mark.django_db(transaction=True)
def test_key_taken_by_a_concurrent_transaction_is_an_idempotency_conflict_and_nothing_is_kept(eur):
    """The other transaction placed the key after this call looked for it: the insert waits for it,
    then the unique index refuses the key; the whole batch is rolled back."""
    round_ = RoundFactory(table=BoundlessTableFactory())
    first, second = PlayerFactory(funded="100.00"), PlayerFactory(funded="100.00")
    holding, release, result = threading.Event(), threading.Event(), {}

    def race():
        try:
            with transaction.atomic():
                result["other"] = place_bet(round_id=round_.pk, key="k", player=second.code, type="main",
                                                     stake="10.00")
                holding.set()
                release.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=race)
    thread.start()
    assert holding.wait(10)

    def release_when_blocked():
        deadline = time.monotonic() + 10
        while not _waiting_for_a_lock() and time.monotonic() < deadline:
            time.sleep(0.02)
        release.set()
        connection.close()

    watcher = threading.Thread(target=release_when_blocked)
    watcher.start()
    try:
        with pytest.raises(IdempotencyConflict, match="used concurrently"):
            place_bets(round_id=round_.pk, bets=[
                {"key": "mine", "player": first.code, "type": "pairs", "stake": "10.00"},
                {"key": "k", "player": first.code, "type": "main", "stake": "10.00"}])
    finally:
        release.set()
        watcher.join()
        thread.join()
    assert result["other"].created
    assert list(Bet.objects.values_list("idempotency_key", "player_id")) == [("k", second.pk)]
    assert balance(first) == Decimal("100.00") and balance(second) == Decimal("90.00")
    assert RoundEvent.objects.filter(round=round_, kind="bet_placed").count() == 1
