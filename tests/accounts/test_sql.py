"""``accounts.sql``: statements with binary parameters, number arrays as literals, and planner
settings that hold for one statement only; the wallets of many players read through them
(``accounts.selectors.player_wallets``) and locked (``accounts.locks.lock_wallets``)."""

from decimal import Decimal

import pytest
from django.db import DataError, transaction

from accounts.locks import lock_wallets
from accounts.selectors import player_wallets
from accounts.sql import BY_KEY, execute_binary, number_array
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
