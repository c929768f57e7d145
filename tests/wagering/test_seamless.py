"""Seamless players' stakes, against the reference wallet as its own process: a batch's requests
stand alone, a record id that clashes with another request's premium mirror included; every
stake debit the operator answered OK whose bet (or extra stake) is not placed, whatever the
reason, an exception after the debits included, has its rollback written in the same call; and
no decision is taken from a journal wallet's balance (seats at a round's opening, a premium
mirror's stake, a negative wallet's alert after a void)."""

from decimal import Decimal

import pytest
from django.db import IntegrityError

from accounts.models import Account
from accounts.services import withdraw
from settlement.models import Alert
from settlement.voids import cancel, void_round
from tables.models import Round, Seat
from tests.factories import PlayerFactory, PremiumTableFactory, RoundFactory
from tests.player_api.conftest import play
from tests.wagering.helpers import deal_hand, sit
from tests.wallets.seamless import adjustment, answering, attempt, journal_wallet, seamless_operator
from wagering import extras, placement
from wagering.closing import close_betting
from wagering.models import Bet
from wagering.placement import place_bets
from wallets.models import WalletCall, WalletMovement
from wallets.port import Debit, open_debits, send_debits
from wallets.reconcile import reconcile

pytestmark = pytest.mark.django_db
State = WalletMovement.State


@pytest.fixture
def cast(wallet, eur):
    """A premium round: transfer players anna (seats 1 and 2) and cleo, 1000.00 each; seamless
    ``sea:f1`` (seats 3 and 4), 1000.00 at the operator's wallet."""
    f1 = seamless_operator("sea", wallet.url, players=("f1",))[1]["f1"]
    wallet.set_player(player="f1", currency="EUR", balance="1000.00")
    anna, cleo = PlayerFactory(funded="1000.00"), PlayerFactory(funded="1000.00")
    round_ = RoundFactory(table=PremiumTableFactory(currency=eur))
    for number, player in ((1, anna), (2, anna), (3, f1), (4, f1)):
        sit(round_.table, number, player)
    return round_, anna, cleo, f1


def _unkept_debits():
    """Keys of the stake debits answered OK that stand for no posting and have no rollback."""
    return set(WalletMovement.objects.filter(call=WalletMovement.Call.DEBIT, state=State.OK, ledger_key__isnull=True,
                                             rollbacks__isnull=True).values_list("key", flat=True))


def test_a_record_id_taken_by_another_requests_mirror_is_refused_alone(cast, wallet):
    round_, anna, cleo, f1 = cast
    outcomes = place_bets(round_id=round_.pk, bets=[
        {"key": "px6-anna-pairs", "player": anna.game_code, "type": "pairs", "stake": "5.00", "seat": 1,
         "record_id": "px6-anna#mirror"},
        {"key": "px6-f1", "player": f1.game_code, "type": "main", "stake": "10.00", "seat": 3},
        {"key": "px6-anna", "player": anna.game_code, "type": "main", "stake": "10.00", "seat": 1}])
    assert [o.error for o in outcomes[:2]] == [None, None]
    assert [b.record_id for o in outcomes[:2] for b in o.bets] == ["px6-anna#mirror", "px6-f1", "px6-f1#mirror"]
    assert outcomes[2].error.code == "idempotency_conflict" and "px6-anna#mirror" in str(outcomes[2].error)
    assert sorted(Bet.objects.filter(round=round_).values_list("record_id", flat=True)) == [
        "px6-anna#mirror", "px6-f1", "px6-f1#mirror"]
    staked = sum(b.stake for b in outcomes[1].bets)
    assert Decimal(wallet.balance_of("f1")) == Decimal("1000.00") - staked
    assert not _unkept_debits() and reconcile().breaches == []


def test_an_idempotency_key_taken_by_another_requests_mirror_is_refused_alone(cast):
    round_, anna, cleo, _ = cast
    outcomes = place_bets(round_id=round_.pk, bets=[
        {"key": "k-anna#mirror", "player": anna.game_code, "type": "pairs", "stake": "5.00", "seat": 1},
        {"key": "k-anna", "player": anna.game_code, "type": "main", "stake": "10.00", "seat": 1}])
    assert outcomes[0].error is None
    assert outcomes[1].error.code == "idempotency_conflict" and "k-anna#mirror" in str(outcomes[1].error)


def test_debits_are_rolled_back_when_placing_fails_after_them(cast, wallet, monkeypatch):
    round_, _, _, f1 = cast

    def clash(*args, **kwargs):
        raise IntegrityError("duplicate key value violates unique constraint")
    monkeypatch.setattr(placement, "_insert_bets", clash)
    with pytest.raises(Exception) as raised:
        place_bets(round_id=round_.pk, bets=[
            {"key": "px6-f1", "player": f1.game_code, "type": "main", "stake": "10.00", "seat": 3}])
    assert raised.value.code == "idempotency_conflict"
    assert not Bet.objects.filter(round=round_).exists()
    rollbacks = WalletMovement.objects.filter(call=WalletMovement.Call.ROLLBACK)
    assert sorted(rollbacks.values_list("reference__key", flat=True)) == [
        f"stake:{round_.pk}:px6-f1", f"stake:{round_.pk}:px6-f1#mirror"]
    assert not _unkept_debits()
    attempt()
    assert wallet.balance_of("f1") == "1000.00"


def test_extra_stake_debits_are_rolled_back_when_taking_fails_after_them(cast, wallet, monkeypatch):
    round_, _, _, f1 = cast
    place_bets(round_id=round_.pk, bets=[
        {"key": "f1-main", "player": f1.game_code, "type": "main", "stake": "10.00", "seat": 3}])
    close_betting(round_id=round_.pk)
    assert Round.objects.get(pk=round_.pk).state == Round.State.CLOSED
    deal_hand(round_, ["5H", "6D"], to="seat:3")
    before = wallet.balance_of("f1")

    def broken(takes):
        raise RuntimeError("the database went away")
    monkeypatch.setattr(extras, "take", broken)
    with pytest.raises(RuntimeError):
        extras.add_extra_stakes(round_id=round_.pk, extras=[
            {"bet": "f1-main", "kind": "double", "cards": ["5H", "6D"]}])
    bet = Bet.objects.get(record_id="f1-main")
    assert not bet.extras.exists()
    (rollback,) = WalletMovement.objects.filter(call=WalletMovement.Call.ROLLBACK)
    assert rollback.reference.key == f"double:{bet.pk}"
    assert not _unkept_debits()
    attempt()
    assert wallet.balance_of("f1") == before


# --- no decision from a journal's balance (Account.known_balance) ------------------------------------

def test_a_seamless_player_keeps_their_seats_whatever_the_journal_holds(cast, wallet):
    round_, _, _, f1 = cast
    adjustment(f1, "-5.00", "taken")  # the journal is below the minimum (it is not the player's money)
    cancel(round_id=round_.pk, reason="test")
    RoundFactory(table=round_.table)
    assert list(Seat.objects.filter(table=round_.table, player=f1).values_list("number", flat=True)) == [3, 4]


def test_a_transfer_player_below_the_minimum_loses_the_seat(cast):
    round_, anna, _, _ = cast
    withdraw(wallet=Account.objects.get(kind="wallet", player=anna), amount="999.50", key="w:anna")
    cancel(round_id=round_.pk, reason="test")
    RoundFactory(table=round_.table)
    assert not Seat.objects.filter(table=round_.table, player=anna).exists()


def test_a_seamless_players_mirror_is_the_full_stake_when_the_operator_covers_it(cast, wallet):
    round_, _, _, f1 = cast
    wallet.set_player(player="f1", currency="EUR", balance="5000.00")
    (outcome,) = place_bets(round_id=round_.pk, bets=[
        {"key": "f1-main", "player": f1.game_code, "type": "main", "stake": "50.00", "seat": 3}])
    assert [(b.seat, b.stake) for b in outcome.bets] == [(3, Decimal("50.00")), (4, Decimal("50.00"))]
    assert wallet.balance_of("f1") == "4900.00"


def test_voiding_a_settled_round_raises_no_negative_wallet_alert_for_a_journal(wallet, eur):
    f1 = seamless_operator("sea", wallet.url, players=("f1",))[1]["f1"]
    adjustment(f1, "-5.00", "taken")
    round_ = play(PremiumTableFactory(currency=eur), {
        "dealer": ["9D", "8C"], "seats": {"1": {"cards": ["TH", "9S"], "actions": ["stand"]}},
        "bets": [{"id": "s1", "player": f1.game_code, "type": "main", "stake": "20.00", "seat": 1}]})
    void_round(round_id=round_.pk, reason="card misread", actor="system")
    assert Account.objects.get(kind="wallet", player=f1).balance == Decimal("-5.00")
    assert not Alert.objects.filter(kind=Alert.Kind.NEGATIVE_WALLET).exists()


@pytest.mark.parametrize("balance, stakes, left", [
    ("60.00", [(3, Decimal("25.00")), (4, Decimal("25.00"))], "10.00"),  # 50 + 50 refused: 25 + 25 (RULES 9)
    ("30.00", None, "30.00"),  # not even 25 + 25: refused, nothing kept
])
def test_a_seamless_players_mirror_the_operator_cannot_cover_is_shared(cast, wallet, balance, stakes, left):
    round_, _, _, f1 = cast
    wallet.set_player(player="f1", currency="EUR", balance=balance)
    (outcome,) = place_bets(round_id=round_.pk, bets=[
        {"key": "f1-main", "player": f1.game_code, "type": "main", "stake": "50.00", "seat": 3}])
    if stakes is None:
        assert outcome.error.code == "insufficient_funds" and not outcome.bets
    else:
        assert outcome.error is None and [(b.seat, b.stake) for b in outcome.bets] == stakes
    assert not _unkept_debits()
    attempt()
    assert wallet.balance_of("f1") == left
    assert reconcile().breaches == []


@pytest.mark.parametrize("body", [b'{"status": "OK"}', b'{"status": "OK", "balance": "1e3"}',
                                  b'{"status": "OK", "balance": 1000.0}', b'{"status": "OK", "balance": NaN}'])
def test_a_stake_answered_ok_without_a_money_string_balance_is_rolled_back_not_placed(eur, body):
    with answering(body) as url:
        f1 = seamless_operator("odd", url, players=("f1",))[1]["f1"]
        round_ = RoundFactory(table=PremiumTableFactory(currency=eur))
        sit(round_.table, 3, f1)
        [outcome] = place_bets(round_id=round_.pk, bets=[
            {"key": "odd-f1", "player": f1.game_code, "type": "main", "stake": "10.00", "seat": 3}])
    assert outcome.error.code == "wallet_unavailable" and not Bet.objects.filter(round=round_).exists()
    debit = WalletMovement.objects.get(call=WalletMovement.Call.DEBIT)
    assert debit.state == State.UNKNOWN and "balance" in debit.last_error
    assert WalletMovement.objects.filter(call=WalletMovement.Call.ROLLBACK, reference=debit).exists()


@pytest.mark.parametrize("body", [b'{"status": "OK\\u0000", "balance": "5.00"}',
                                  b'{"status": "OK", "balance": "5.00", "\\ud800": "x"}'])
def test_a_stake_answered_with_a_nul_or_a_lone_surrogate_is_rolled_back_and_its_answer_kept(eur, body):
    """No database stores such an answer as JSON: the bet is refused ``wallet_unavailable`` (never
    a 500, which took the batch's other bets with it), the debit rolled back, its attempt
    journaled with the answer as text."""
    other = PlayerFactory(funded="100.00")
    with answering(body) as url:
        f1 = seamless_operator("odd", url, players=("f1",))[1]["f1"]
        round_ = RoundFactory(table=PremiumTableFactory(currency=eur))
        sit(round_.table, 3, f1)
        sit(round_.table, 4, other)
        outcome, placed = place_bets(round_id=round_.pk, bets=[
            {"key": "odd-f1", "player": f1.game_code, "type": "main", "stake": "10.00", "seat": 3},
            {"key": "other", "player": other.game_code, "type": "main", "stake": "10.00", "seat": 4}])
    assert outcome.error.code == "wallet_unavailable" and placed.error is None
    assert list(Bet.objects.filter(round=round_).values_list("player", flat=True)) == [other.pk]
    debit = WalletMovement.objects.get(call=WalletMovement.Call.DEBIT)
    assert debit.state == State.UNKNOWN and debit.attempts == 1
    [call] = WalletCall.objects.filter(movement=debit)
    assert call.answer == body.decode()
    assert WalletMovement.objects.filter(call=WalletMovement.Call.ROLLBACK, reference=debit).exists()


def _held_elsewhere(round_, player, claim):
    """A stake debit of ``player``'s recorded by another call for ``round_``, not answered yet,
    holding ``claim`` (as a concurrent bet's does while it is sent)."""
    (movement,) = open_debits([Debit(key=f"stake:{round_.pk}:elsewhere", kind="stake", wallet=journal_wallet(player),
                                     amount=Decimal("10.00"), round_ref=str(round_.pk), table_ref=round_.table.code,
                                     claim=claim)]).values()
    return movement


def test_a_position_a_live_debit_holds_is_refused_before_any_debit_then_free_once_it_is_not(cast, wallet):
    """RULES 6, 7, 8: a concurrent call's debit not answered yet holds its bet's position: a bet of
    the player's on it is refused as stacked and its own debit never sent; once that debit is
    refused, the position is free."""
    round_, _, _, f1 = cast
    held = _held_elsewhere(round_, f1, "main:3")
    request = {"key": "f1-main", "player": f1.game_code, "type": "main", "stake": "10.00", "seat": 3}
    (outcome,) = place_bets(round_id=round_.pk, bets=[request])
    assert outcome.error.code == "bet_stacked" and not outcome.bets
    assert list(WalletMovement.objects.values_list("key", flat=True)) == [held.key]
    assert wallet.balance_of("f1") == "1000.00"
    WalletMovement.objects.filter(pk=held.pk).update(state=State.REFUSED, status="INSUFFICIENT_FUNDS")
    (outcome,) = place_bets(round_id=round_.pk, bets=[request])
    assert outcome.error is None and [b.seat for b in outcome.bets] == [3, 4]


def test_a_bet_whose_debit_was_not_sent_keeps_the_reason_when_the_holder_is_refused_meanwhile(
        cast, wallet, monkeypatch):
    """The debit holding the position is refused while the call that found it held sends its
    other debits: its bet is still refused as stacked (the reason its debit was not sent)."""
    round_, anna, _, f1 = cast
    held = _held_elsewhere(round_, f1, "pairs:3")

    def meanwhile(movements):
        WalletMovement.objects.filter(pk=held.pk).update(state=State.REFUSED, status="INSUFFICIENT_FUNDS")
        return send_debits(movements)
    monkeypatch.setattr(placement, "send_debits", meanwhile)
    outcomes = place_bets(round_id=round_.pk, bets=[
        {"key": "f1-pairs", "player": f1.game_code, "type": "pairs", "stake": "5.00", "seat": 3},
        {"key": "f1-main", "player": f1.game_code, "type": "main", "stake": "10.00", "seat": 3}])
    assert outcomes[0].error.code == "bet_stacked" and outcomes[1].error is None
    assert not _unkept_debits()
