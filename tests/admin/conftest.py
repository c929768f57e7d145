"""Fixtures of the operator-site tests: played and settled rounds built through the services, staff
users in each role, and two operators with their own players, bets, disputes, alerts and audit
rows (``two_operators``)."""

from types import SimpleNamespace

import pytest

from accounts.models import Account, LedgerTransaction, OperatorAPICall, OperatorStaff
from accounts.operators import create_operator
from adminkit.roles import DISPUTE_OFFICER, SUPERVISOR, VIEWER
from settlement.disputes import manual_adjustment, open_dispute
from settlement.models import Alert, OperatorAction
from settlement.results import record_result
from settlement.services import resettle_round, settle_round
from tests.factories import BoundlessTableFactory, CurrencyFactory, PlayerFactory, RoundFactory, make_operator, scan
from wagering.closing import close_betting
from wagering.placement import place_bets


def play_boundless_round(n_bets, *, table=None, players=None):
    """A settled boundless round with ``n_bets`` main bets of 10.00 EUR: the first bet hits (8♣ 8♥
    + 3♦ = 19, then auto-play stands), the others stand on 16; the dealer draws T♣ 7♠ (17).
    ``players``: one per bet, of any operator (named by their ``game_code``, as the game server
    does). Returns ``(round, bets)``."""
    table = table or BoundlessTableFactory()
    players = players or [PlayerFactory(funded="100.00") for _ in range(n_bets)]
    round_ = RoundFactory(table=table)
    place_bets(round_id=round_.pk, actor="test", bets=[
        {"key": f"{round_.pk}-{i}", "record_id": f"b{i}", "player": p.game_code, "type": "main", "stake": "10.00"}
        for i, p in enumerate(players)])
    close_betting(round_id=round_.pk, actor="test")
    record = {"format": "round-record/1", "variant": "boundless", "round": round_.external_id,
              "shoe_round": round_.shoe_round, "currency": "EUR", "dealer": ["TC", "7S"],
              "player_cards": ["8C", "8H", "3D"],
              "bets": [{"id": f"b{i}", "player": p.game_code, "type": "main", "stake": "10.00",
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


def staff_of(operator, role, username):
    """A staff user in ``role`` who is ``operator``'s (an ``OperatorStaff`` row)."""
    user = make_operator(role, username=username)
    OperatorStaff.objects.create(user=user, operator=operator)
    return user


#: What only operator B's rows hold: none of it may reach a page of an A-scoped user.
B_MARKERS = ("brand-beta", "Beta Casino", "beta-p", "777.77", "757.77", "beta complaint", "beta goodwill",
             "beta correction", "beta-wallet-secret", "rtp-provider-only")


def two_operators():
    """Operators A (``brand-alpha``) and B (``brand-beta``, with a wallet secret) with two players
    each (A's funded 100.00, B's 777.77); a settled round shared by both (``shared``: bets A0
    (wins), B0, A1, B1) and one of B's alone (``b_round``: B0 wins, B1), corrected once by the
    provider (a suit misread: no return changes); a dispute each (``a_dispute`` on A1's shared bet,
    ``b_dispute`` on B1's own-round bet); a negative-wallet alert about a player of each and a
    provider's RTP alert; a manual adjustment on a wallet of each (audited); each operator's first
    API key, and a call of B's."""
    CurrencyFactory(code="EUR")
    provider = make_operator(SUPERVISOR, username="provider_supervisor")
    a, _ = create_operator(code="brand-alpha", name="Alpha Casino", currencies=["EUR"])
    b, _ = create_operator(code="brand-beta", name="Beta Casino", currencies=["EUR"],
                           wallet_secret="beta-wallet-secret-xyz")
    alpha = [PlayerFactory(operator=a, code=f"alpha-p{i}", funded="100.00") for i in (0, 1)]
    beta = [PlayerFactory(operator=b, code=f"beta-p{i}", funded="777.77") for i in (0, 1)]
    shared, shared_bets = play_boundless_round(4, players=[alpha[0], beta[0], alpha[1], beta[1]])
    b_round, b_bets = play_boundless_round(2, players=beta)
    resettle_round(round_id=b_round.pk, corrected_record={**b_round.record, "player_cards": ["8C", "8H", "3H"]},
                   reason="beta correction", actor=provider)  # a misread suit: every return stays
    a_dispute = open_dispute(player=alpha[1], bets=[shared_bets[2]], reason="alpha complaint")
    b_dispute = open_dispute(player=beta[1], bets=[b_bets[1]], reason="beta complaint")
    a_alert = Alert.objects.create(kind=Alert.Kind.NEGATIVE_WALLET, player=alpha[0], table=shared.table,
                                   round=shared, message="wallet of brand-alpha:alpha-p0 is -1.00 EUR")
    b_alert = Alert.objects.create(kind=Alert.Kind.NEGATIVE_WALLET, player=beta[0], table=b_round.table,
                                   round=b_round, message="wallet of brand-beta:beta-p0 is -2.00 EUR")
    provider_alert = Alert.objects.create(kind=Alert.Kind.RTP_DEVIATION, table=shared.table,
                                          message="observed RTP rtp-provider-only")
    manual_adjustment(player=alpha[0], currency="EUR", amount="1.00", reason="alpha goodwill", actor=provider,
                      key="alpha-1")
    manual_adjustment(player=beta[0], currency="EUR", amount="1.00", reason="beta goodwill", actor=provider,
                      key="beta-1")
    b_key = b.api_keys.get()
    return SimpleNamespace(
        a=a, b=b, alpha=alpha, beta=beta, provider=provider, shared=shared, shared_bets=shared_bets,
        b_round=b_round, b_bets=b_bets, a_dispute=a_dispute, b_dispute=b_dispute, a_alert=a_alert, b_alert=b_alert,
        provider_alert=provider_alert, a_key=a.api_keys.get(), b_key=b_key,
        a_wallet=Account.objects.get(kind=Account.Kind.WALLET, player=alpha[0]),
        b_wallet=Account.objects.get(kind=Account.Kind.WALLET, player=beta[0]),
        b_house=Account.objects.get(kind=Account.Kind.HOUSE, operator=b, name=b_round.table.house_name),
        b_transaction=LedgerTransaction.objects.get(key=b_bets[0].stake_key()),
        a_action=OperatorAction.objects.get(reason="alpha goodwill"),
        b_action=OperatorAction.objects.get(reason="beta goodwill"),
        b_correction=b_round.corrections.get(),
        b_call=OperatorAPICall.objects.create(key=b_key, operator=b, method="GET", path="/players/beta-p0/",
                                              status=200))
