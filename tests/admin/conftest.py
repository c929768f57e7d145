"""Fixtures of the operator-site tests: played and settled rounds built through the services, and
staff users in each role."""

import pytest

from adminkit.roles import DISPUTE_OFFICER, SUPERVISOR, VIEWER
from settlement.results import record_result
from settlement.services import settle_round
from tests.factories import BoundlessTableFactory, PlayerFactory, RoundFactory, make_operator, scan
from wagering.closing import close_betting
from wagering.placement import place_bets


def play_boundless_round(n_bets, *, table=None, players=None):
    """A settled boundless round with ``n_bets`` main bets of 10.00 EUR: the first bet hits (8♣ 8♥
    + 3♦ = 19, then auto-play stands), the others stand on 16; the dealer draws T♣ 7♠ (17).
    Returns ``(round, bets)``."""
    table = table or BoundlessTableFactory()
    players = players or [PlayerFactory(funded="100.00") for _ in range(n_bets)]
    round_ = RoundFactory(table=table)
    place_bets(round_id=round_.pk, actor="test", bets=[
        {"key": f"{round_.pk}-{i}", "record_id": f"b{i}", "player": p.code, "type": "main", "stake": "10.00"}
        for i, p in enumerate(players)])
    close_betting(round_id=round_.pk, actor="test")
    record = {"format": "round-record/1", "variant": "boundless", "round": round_.external_id,
              "shoe_round": round_.shoe_round, "currency": "EUR", "dealer": ["TC", "7S"],
              "player_cards": ["8C", "8H", "3D"],
              "bets": [{"id": f"b{i}", "player": p.code, "type": "main", "stake": "10.00",
                        "actions": ["hit"] if i == 0 else ["stand"]} for i, p in enumerate(players)]}
    scan(round_.pk, record)
    record_result(round_id=round_.pk, record=record, actor="test")
    settle_round(round_id=round_.pk)
    round_.refresh_from_db()
    return round_, list(round_.bets.order_by("id"))


@pytest.fixture
def settled_round(db):
    """A settled boundless round of three bets (see ``play_boundless_round``)."""
    return play_boundless_round(3)


@pytest.fixture
def viewer(db):
    return make_operator(VIEWER)


@pytest.fixture
def officer(db):
    return make_operator(DISPUTE_OFFICER)


@pytest.fixture
def supervisor(db):
    return make_operator(SUPERVISOR)


def lists_bet(page, bet):
    """True when the Bet Record ``page`` (HTML) lists ``bet`` (its change link)."""
    return f'href="/admin/wagering/bet/{bet.pk}/change/' in page
