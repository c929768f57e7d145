"""``accounts.sql``: statements with binary parameters, number arrays as literals, and planner
settings that hold for one statement only; model instances of rows (``instances``); the wallets of
many players read through them (``accounts.selectors.player_wallets``) and locked
(``accounts.locks.lock_wallets``)."""

from datetime import UTC
from decimal import Decimal

import pytest
from django.db import DataError, IntegrityError, transaction

from accounts.locks import lock_wallets
from accounts.models import Account, LedgerTransaction
from accounts.selectors import player_wallets
from accounts.sql import BY_KEY, array_sql, execute_binary, insert_rows, instances, number_array
from tests.factories import CurrencyFactory, PlayerFactory, fund, wallet_for

pytestmark = pytest.mark.django_db


def _settings():
    return execute_binary("SELECT current_setting('enable_seqscan'), current_setting('jit')", [])[0]


@pytest.mark.postgresql
def test_planner_settings_hold_for_the_statement_and_are_restored_after():
    with transaction.atomic():
        execute_binary("SELECT set_config('jit', 'off', true)", [])  # the caller's own setting survives
        assert _settings() == ("on", "off")
        during = execute_binary("SELECT current_setting('enable_seqscan'), current_setting('jit')", [],
                                planner=BY_KEY)
        assert during == [("off", "off")]
        assert _settings() == ("on", "off")


@pytest.mark.postgresql
def test_number_arrays_round_trip_exactly_and_refuse_what_is_not_a_number():
    amounts = [Decimal("0.01"), Decimal("-12.50"), Decimal("123456789012.3400"), Decimal(7)]
    assert execute_binary("SELECT %s::numeric[]", [number_array(amounts)]) == [(amounts,)]
    assert execute_binary("SELECT %s::bigint[]", [number_array([2**62, -1, 0])]) == [([2**62, -1, 0],)]
    with pytest.raises(DataError), transaction.atomic():
        execute_binary("SELECT %s::bigint[]", [number_array([1, "2}, {3"])])


@pytest.mark.postgresql
def test_timestamps_come_back_aware_in_utc_as_the_orm_reads_them():
    player = PlayerFactory()
    ((joined, none, moment),) = execute_binary(
        "SELECT date_joined, NULL::timestamptz, '2026-03-29 01:30:00.123456+02'::timestamptz FROM auth_user "
        "WHERE id = %b", [player.user_id])
    assert joined == type(player.user).objects.get(pk=player.user_id).date_joined and none is None
    assert moment.isoformat() == "2026-03-28T23:30:00.123456+00:00"
    assert joined.tzinfo is moment.tzinfo is UTC


@pytest.mark.postgresql
@pytest.mark.parametrize(("values", "sql_type"), [(["payout"] * 3, "varchar"), ([7, 7], "bigint"),
                                                  ([Decimal("2.50")] * 4, "numeric")])
def test_an_array_of_one_value_repeated_is_sent_as_that_value_and_its_length(values, sql_type):
    sql, params = array_sql("a", values, sql_type, spread=False)
    assert list(params.values()) == [values[0], len(values)]  # nothing encoded per element
    assert execute_binary(f"SELECT {sql}", params) == [(values,)]


@pytest.mark.postgresql
@pytest.mark.parametrize("values", [["a", "b", "a"], [None, None], ["x"], []])
def test_an_array_of_different_values_is_sent_whole(values):
    sql, params = array_sql("a", values, "varchar", spread=False)
    assert list(params.values()) == [values]
    assert execute_binary(f"SELECT {sql}", params) == [(values,)]


def test_player_wallets_are_the_wallets_of_those_players_in_that_currency():
    eur, usd = CurrencyFactory(code="EUR"), CurrencyFactory(code="USD")
    alice, bob, carol = PlayerFactory(funded="10.00"), PlayerFactory(funded="20.00"), PlayerFactory(funded="30.00")
    PlayerFactory(funded="40.00", funded__currency="USD")
    fund(alice, "5.00", "USD")  # alice also holds dollars: not read for a EUR round

    wallets = player_wallets({alice.pk, bob.pk}, eur)
    assert set(wallets) == {alice.pk, bob.pk}
    assert {p: (w.currency_id, w.balance) for p, w in wallets.items()} == {
        alice.pk: ("EUR", Decimal("10.00")), bob.pk: ("EUR", Decimal("20.00"))}
    assert wallets[alice.pk].currency is eur  # no query per wallet for its currency
    assert player_wallets({carol.pk}, usd) == {}
    with transaction.atomic():
        assert set(lock_wallets({alice.pk, carol.pk}, eur)) == {alice.pk, carol.pk}


@pytest.mark.parametrize("count", [1, 3])
def test_insert_rows_writes_what_bulk_create_writes_and_gives_the_keys_in_order(count):
    """One row (every column one parameter) and several (mixed columns: arrays, a JSON list, a
    None among datetimes), read back through the ORM as bulk_create would have written them."""
    from django.utils import timezone

    from wallets.models import WalletMovement

    player = PlayerFactory(funded="1.00")
    wallet = wallet_for(player=player, currency="EUR")
    now = timezone.now()
    rows = [WalletMovement(key=f"insert-rows-{i}", call="credit", kind="payout", operator_id=player.operator_id,
                           player=player, currency_id=wallet.currency_id, amount=Decimal(f"{i}.25"),
                           bets=[i, i + 1] if i else [], next_attempt_at=now if i % 2 else None)
            for i in range(count)]
    assert insert_rows(WalletMovement, rows) is rows
    stored = {m.pk: m for m in WalletMovement.objects.filter(key__startswith="insert-rows-")}
    assert [m.pk for m in rows] == sorted(stored) and len(stored) == count
    for i, m in enumerate(rows):
        back = stored[m.pk]
        assert (back.key, back.amount, back.bets, back.next_attempt_at) == (
            f"insert-rows-{i}", Decimal(f"{i}.25"), [i, i + 1] if i else [], now if i % 2 else None)
        assert back.created_at is not None and not m._state.adding
    with pytest.raises(IntegrityError), transaction.atomic():
        insert_rows(WalletMovement, [WalletMovement(key="insert-rows-0", call="credit", kind="payout",
                                                    operator_id=player.operator_id, player=player,
                                                    currency_id=wallet.currency_id, amount=Decimal(1))])


def test_instances_are_loaded_rows_whose_other_fields_are_deferred_and_whose_shared_relations_are_set(
        django_assert_num_queries):
    eur = CurrencyFactory(code="EUR")
    alice = PlayerFactory(funded="10.00")
    stored = Account.objects.get(player=alice, currency=eur)
    names = {"id", "kind", "balance"}
    columns = [f.attname for f in Account._meta.concrete_fields if f.attname in names]
    [wallet] = instances(Account, [tuple(getattr(stored, c) for c in columns)], names, shared={"currency": eur})
    with django_assert_num_queries(0):
        assert (wallet.pk, wallet.balance, wallet.is_wallet) == (stored.pk, Decimal("10.00"), True)
        assert wallet.currency is eur
        assert not wallet._state.adding and wallet._state.db == "default"
    assert wallet.get_deferred_fields() >= {"player_id", "operator_id"}
    with django_assert_num_queries(1):  # a deferred field is loaded when read, as a queryset's would be
        assert wallet.player_id == alice.pk
    [transaction_] = instances(LedgerTransaction, [tuple(
        getattr(t, f.attname) for f in LedgerTransaction._meta.concrete_fields)
        for t in LedgerTransaction.objects.filter(entries__account=stored)])
    assert transaction_ == LedgerTransaction.objects.get(entries__account=stored)
    assert transaction_.get_deferred_fields() == set()
