"""``accounts.sql``: statements with binary parameters, number arrays as literals, and planner
settings that hold for one statement only; model instances of rows (``instances``); the wallets of
many players read through them (``accounts.selectors.player_wallets``) and locked
(``accounts.locks.lock_wallets``)."""

from decimal import Decimal

import pytest
from django.db import DataError, transaction

from accounts.locks import lock_wallets
from accounts.models import Account, LedgerTransaction
from accounts.selectors import player_wallets
from accounts.sql import BY_KEY, execute_binary, instances, number_array
from tests.factories import CurrencyFactory, PlayerFactory, fund

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
