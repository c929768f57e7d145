"""The stored bet details (``settlement.details``): built once per kind of bet, and for every bet
exactly the engine's own detail without the record's ids."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from settlement.details import distinct_details, stored_detail
from settlement.selectors import PRIVATE_DETAIL
from tables.engine import settle
from tables.engine.play import deal_round


def _check(result):
    results = list(result.bets.values())
    details, index = distinct_details(results)
    assert len(index) == len(results)
    for bet, position in zip(results, index):
        own = bet.to_dict()
        assert details[position] == {k: v for k, v in own.items() if k not in PRIVATE_DETAIL}
        assert details[position] == stored_detail(bet)
    return details


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["classic", "premium", "boundless"]), st.integers(min_value=0, max_value=2**32),
       st.integers(min_value=1, max_value=80))
def test_every_bet_gets_its_own_detail_without_the_ids(variant, seed, players):
    _check(settle(deal_round(variant, random.Random(seed), players=players)))


def test_a_boundless_round_builds_each_kind_of_bet_once():
    record = deal_round("boundless", random.Random(0), players=400)  # the dealer shows an ace: insurance
    rng = random.Random(6)
    for bet in record["bets"]:  # a few stakes, so that kinds repeat with different stakes
        bet["stake"] = rng.choice(["1.00", "2.50", "10.00"])
    details = _check(settle(record))
    assert len(details) < len(record["bets"]) / 4
    assert all(a != b for i, a in enumerate(details) for b in details[i + 1:])
