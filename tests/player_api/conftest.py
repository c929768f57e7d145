"""Fixtures of the player API tests: players with API clients, and rounds played through the
services (open, bet, close, result, optionally settle) on small hand-made round records."""

import itertools

import pytest

from settlement.results import record_result
from settlement.services import settle_round
from tables.services import open_round
from tests.factories import BoundlessTableFactory, CurrencyFactory, PlayerFactory, PremiumTableFactory, scan
from tests.wagering.conftest import client_for
from wagering.closing import close_betting
from wagering.placement import place_bets

_rounds = itertools.count(1)


@pytest.fixture
def eur(db):
    return CurrencyFactory(code="EUR")


@pytest.fixture
def alice(eur):
    return PlayerFactory(code="alice", funded="1000.00")


@pytest.fixture
def bob(eur):
    return PlayerFactory(code="bob", funded="1000.00")


@pytest.fixture
def carol(eur):
    return PlayerFactory(code="carol", funded="1000.00")


@pytest.fixture
def api(alice):
    """Alice's API client."""
    return client_for(alice.user)


def play(table, record, *, settle=True):
    """Play ``record`` (a round record without ``round``/``currency``/``shoe_round``) on ``table``
    through the services; bets are placed in record order. Returns the ``Round``."""
    external_id = f"R-{next(_rounds)}"
    round_ = open_round(table_code=table.code, external_id=external_id, shoe=1, burn_count=2, actor="test")
    record = {"format": "round-record/1", "variant": table.variant, "round": external_id,
              "shoe_round": round_.shoe_round, "currency": "EUR", **record}
    outcomes = place_bets(round_id=round_.pk, actor="test", bets=[
        {"key": f"{external_id}:{b['id']}", "record_id": b["id"], "player": b["player"], "type": b["type"],
         "stake": b["stake"], "seat": b.get("seat")} for b in record["bets"]])
    assert not [o.error for o in outcomes if o.error]
    close_betting(round_id=round_.pk, actor="test")
    scan(round_.pk, record)
    record_result(round_id=round_.pk, record=record, actor="test")
    if settle:
        settle_round(round_id=round_.pk)
    round_.refresh_from_db()
    return round_


@pytest.fixture
def premium_round(alice, bob, carol):
    """Premium: carol sits on seat 1 (19, stands), alice on seat 2 (5 6 9 = 20 after a hit) with a
    pairs bet, bob bets behind seat 1. Dealer 9 8 = 17: every hand wins. Settled."""
    return play(PremiumTableFactory(), {
        "dealer": ["9D", "8C"],
        "seats": {"1": {"cards": ["TH", "9S"], "actions": ["stand"]},
                  "2": {"cards": ["5C", "6D", "9H"], "actions": ["hit", "stand"]}},
        "bets": [{"id": "c1", "player": "carol", "type": "main", "stake": "10.00", "seat": 1},
                 {"id": "a1", "player": "alice", "type": "main", "stake": "20.00", "seat": 2},
                 {"id": "a2", "player": "alice", "type": "pairs", "stake": "1.00", "seat": 2},
                 {"id": "b1", "player": "bob", "type": "behind", "stake": "5.00", "seat": 1}]})


@pytest.fixture
def boundless_round(alice, bob):
    """Boundless, NOT settled: alice hits (T 6 + 5 = 21), bob never answers (auto-play stands on 16).
    Dealer 7 T = 17."""
    return play(BoundlessTableFactory(), {
        "dealer": ["7D", "TC"], "player_cards": ["TH", "6C", "5S"],
        "bets": [{"id": "a", "player": "alice", "type": "main", "stake": "10.00", "actions": ["hit"]},
                 {"id": "b", "player": "bob", "type": "main", "stake": "10.00", "actions": []}]}, settle=False)
