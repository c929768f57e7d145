"""Placement and round rules through the service layer (RULES 4, 6, 8, 9, 10)."""

from decimal import Decimal

import pytest

from accounts.exceptions import IdempotencyConflict, InsufficientFunds, InvalidAmount
from accounts.models import Player
from settlement.results import record_result
from settlement.voids import cancel
from tables.exceptions import IllegalTransition, NotFound
from tables.models import Round, RoundEvent, Seat, Shoe
from tables.services import open_round, report_play, resume, suspend
from tests.factories import (
    BoundlessTableFactory,
    ClassicTableFactory,
    CurrencyFactory,
    PlayerFactory,
    PremiumTableFactory,
    RoundFactory,
    TableFactory,
)
from wagering.closing import close_betting
from wagering.exceptions import (
    BehindOwnSeat,
    BettingClosed,
    InvalidExtra,
    LimitExceeded,
    SeatNotAllowed,
    SeatTaken,
    SideBetUnavailable,
)
from wagering.extras import add_extra_stake, add_extra_stakes
from wagering.models import Bet, BetExtra
from wagering.placement import place_bet

from .helpers import balance, deal_hand, keys, show_up_card, sit

pytestmark = pytest.mark.django_db
D = Decimal


def bet(round_, player, type="main", stake="10.00", seat=None, key=None):
    key = key or f"{player.code}:{type}:{seat}:{stake}:{Bet.objects.count()}"
    return place_bet(round_id=round_.pk, key=key, player=player.code, type=type, stake=stake, seat=seat)


def kinds(round_):
    return [e.kind for e in RoundEvent.objects.filter(round=round_)]


# --- stakes, idempotency, limits -------------------------------------------------------------------

def test_stake_debited_at_once_under_stake_key(eur):
    round_ = RoundFactory(table=PremiumTableFactory())
    player = PlayerFactory(funded="100.00")
    placed = bet(round_, player, seat=1).bets[0]
    assert balance(player) == D("90.00")
    assert keys("stake:") == {f"stake:{placed.pk}"}
    assert placed.state == Bet.State.PLACED and placed.record_id == placed.idempotency_key


def test_same_key_twice_is_one_bet_and_one_debit_different_body_conflicts(eur):
    round_ = RoundFactory(table=BoundlessTableFactory())
    player = PlayerFactory(funded="100.00")
    first = bet(round_, player, key="gs-1")
    again = bet(round_, player, key="gs-1")
    assert again.bets[0].pk == first.bets[0].pk and first.created and not again.created
    assert balance(player) == D("90.00") and Bet.objects.count() == 1
    with pytest.raises(IdempotencyConflict):
        bet(round_, player, key="gs-1", stake="20.00")
    assert balance(player) == D("90.00")


@pytest.mark.parametrize("stake", ["0.50", "1000.01", "10.50"])
def test_limits_min_max_chip_step(eur, stake):
    round_ = RoundFactory(table=BoundlessTableFactory(limits={"main": ("1.00", "1000.00", "1.00")}))
    player = PlayerFactory(funded="5000.00")
    with pytest.raises(LimitExceeded):
        bet(round_, player, stake=stake)
    assert balance(player) == D("5000.00") and not Bet.objects.exists()


@pytest.mark.parametrize("stake", [10.5, "-1.00", "1.001", "ten", None])
def test_malformed_amounts_are_invalid_amount(eur, stake):
    round_ = RoundFactory(table=BoundlessTableFactory())
    with pytest.raises(InvalidAmount):
        bet(round_, PlayerFactory(funded="100.00"), stake=stake)


def test_insufficient_funds_and_unknown_player(eur):
    round_ = RoundFactory(table=BoundlessTableFactory())
    with pytest.raises(InsufficientFunds):
        bet(round_, PlayerFactory(funded="5.00"))
    with pytest.raises(NotFound):
        place_bet(round_id=round_.pk, key="x", player="nobody", type="main", stake="1.00")
    with pytest.raises(NotFound):
        place_bet(round_id=999999, key="y", player="nobody", type="main", stake="1.00")
    assert kinds(round_).count("bet_rejected") == 2


# --- RULES 8: side bets ----------------------------------------------------------------------------

def round_at(table, shoe_round):
    Shoe.objects.create(table=table, sequence=1, rounds_dealt=shoe_round - 1)
    return RoundFactory(table=table)


@pytest.mark.parametrize("bet_type,last", [("pairs", 40), ("bust_bonus", 45), ("lucky_trio", 45), ("poker_trio", 45)])
def test_rules_8_boundless_side_bets_end_at_their_last_shoe_round(eur, bet_type, last):
    player = PlayerFactory(funded="100.00")
    ok = round_at(BoundlessTableFactory(), last)
    assert ok.shoe_round == last
    bet(ok, player, type=bet_type, stake="1.00")
    late = round_at(BoundlessTableFactory(), last + 1)
    with pytest.raises(SideBetUnavailable):
        bet(late, player, type=bet_type, stake="1.00")


def test_rules_8_bet_type_of_another_variant_is_unavailable(eur):
    round_ = RoundFactory(table=PremiumTableFactory())
    player = PlayerFactory(funded="100.00")
    bet(round_, player, seat=1)
    with pytest.raises(SideBetUnavailable):
        bet(round_, player, type="pair", stake="1.00", seat=1)
    boundless = RoundFactory(table=BoundlessTableFactory())
    with pytest.raises(SideBetUnavailable):
        bet(boundless, player, type="behind", stake="1.00")


# --- RULES 9: seats --------------------------------------------------------------------------------

def test_rules_9_trial_accounts_never_sit_but_may_bet_behind(eur):
    round_ = RoundFactory(table=PremiumTableFactory())
    trial = PlayerFactory(funded="100.00", account_kind=Player.Kind.TRIAL)
    with pytest.raises(SeatNotAllowed):
        bet(round_, trial, seat=1)
    bet(round_, PlayerFactory(funded="100.00"), seat=1)
    bet(round_, trial, type="behind", seat=1)
    assert balance(trial) == D("90.00")


def test_rules_9_play_for_fun_currency_never_sits(db):
    fun = CurrencyFactory(code="FUN", play_for_fun=True)
    round_ = RoundFactory(table=ClassicTableFactory(currency=fun))
    with pytest.raises(SeatNotAllowed):
        bet(round_, PlayerFactory(funded="100.00", funded__currency="FUN"), seat=1)


def test_rules_9_classic_one_seat_per_player(eur):
    round_ = RoundFactory(table=ClassicTableFactory())
    player = PlayerFactory(funded="100.00")
    bet(round_, player, seat=1)
    with pytest.raises(SeatNotAllowed):
        bet(round_, player, seat=2)


def test_rules_9_seat_taken(eur):
    round_ = RoundFactory(table=ClassicTableFactory())
    bet(round_, PlayerFactory(funded="100.00"), seat=3)
    with pytest.raises(SeatTaken):
        bet(round_, PlayerFactory(funded="100.00"), seat=3)
    with pytest.raises(SeatNotAllowed):
        bet(round_, PlayerFactory(funded="100.00"), seat=8)


def test_rules_9_premium_two_seats_mirrored_when_balance_covers_both(eur):
    table = PremiumTableFactory()
    player = PlayerFactory(funded="100.00")
    sit(table, 2, player)
    sit(table, 5, player)
    round_ = RoundFactory(table=table)
    placed = bet(round_, player, seat=2, stake="10.00").bets
    assert [(b.seat, b.stake) for b in placed] == [(2, D("10.00")), (5, D("10.00"))]
    assert balance(player) == D("80.00")
    with pytest.raises(SeatNotAllowed):  # a third seat
        bet(round_, player, seat=6)


def test_rules_9_premium_split_equally_rounded_down_to_chip_step_decision(eur):
    table = PremiumTableFactory(limits={"main": ("1.00", "1000.00", "1.00")})
    player = PlayerFactory(funded="15.00")
    sit(table, 1, player)
    sit(table, 2, player)
    round_ = RoundFactory(table=table)
    placed = bet(round_, player, seat=1, stake="15.00").bets
    assert [b.stake for b in placed] == [D("7.00"), D("7.00")]
    assert balance(player) == D("1.00")


def test_the_timeline_writes_money_in_the_currencys_minor_units(eur):
    """A stake split over two premium seats, an extra stake and its fallback are written in the
    timeline with the currency's two decimals, whatever the chip step's."""
    table = PremiumTableFactory(limits={"main": ("1.00", "1000.00", "1.00")})
    player, poor = PlayerFactory(funded="150.00"), PlayerFactory(funded="1.00")
    sit(table, 1, player)
    sit(table, 2, player)
    round_ = RoundFactory(table=table)
    placed = bet(round_, player, seat=1, stake="100.00", key="m").bets
    bet(round_, poor, seat=3, stake="1.00", key="p")
    assert [b.stake for b in placed] == [D("50.00"), D("50.00")]
    close_betting(round_id=round_.pk)
    scan_cards(round_, ("5H", "seat:1"), ("5C", "seat:2"), ("8H", "seat:3"), ("9S", "dealer"),
               ("6D", "seat:1"), ("6C", "seat:2"), ("3H", "seat:3"), ("7D", "dealer"))
    add_extra_stakes(round_id=round_.pk, extras=[{"bet": "m", "kind": "double", "cards": ["5H", "6D"]},
                                                 {"bet": "p", "kind": "double", "cards": ["8H", "3H"]}])
    money = [(e.kind, e.payload.get("stake") or e.payload.get("amount") or e.payload.get("needed"))
             for e in RoundEvent.objects.filter(round=round_, kind__in=["bet_placed", "extra_stake", "fallback"])]
    assert money == [("bet_placed", "50.00"), ("bet_placed", "50.00"), ("bet_placed", "1.00"),
                     ("extra_stake", "50.00"), ("fallback", "1.00")]


def test_rules_9_premium_second_seat_needs_an_equal_stake(eur):
    round_ = RoundFactory(table=PremiumTableFactory())
    player = PlayerFactory(funded="100.00")
    bet(round_, player, seat=1, stake="10.00")
    with pytest.raises(SeatNotAllowed):
        bet(round_, player, seat=2, stake="20.00")
    bet(round_, player, seat=2, stake="10.00")
    assert Seat.objects.filter(player=player).count() == 2


def test_rules_9_grace_round_then_unseated_and_rules_6_orphan_bets_refunded(eur):
    table = PremiumTableFactory()
    seated, backer = PlayerFactory(funded="100.00"), PlayerFactory(funded="100.00")
    sit(table, 4, seated)
    first = RoundFactory(table=table)
    behind = bet(first, backer, type="behind", seat=4, stake="5.00").bets[0]
    pairs = bet(first, backer, type="pairs", seat=4, stake="1.00").bets[0]
    close_betting(round_id=first.pk)
    assert balance(backer) == D("100.00")
    assert keys("refund:") == {f"refund:{behind.pk}", f"refund:{pairs.pk}"}
    assert sorted(e.payload["refunded"] for e in RoundEvent.objects.filter(kind="bet_refunded")) == ["1.00", "5.00"]
    assert set(Bet.objects.values_list("state", flat=True)) == {"refunded"}
    seat = Seat.objects.get(table=table, number=4)
    assert seat.player == seated and seat.rounds_without_bet == 1  # grace round: keeps the seat
    cancel(round_id=first.pk, reason="test")
    second = RoundFactory(table=table)
    close_betting(round_id=second.pk)
    assert Seat.objects.get(table=table, number=4).player is None
    assert "unseated" in kinds(second)


def test_rules_9_balance_below_minimum_unseats_at_round_start(eur):
    table = ClassicTableFactory(limits={"main": ("5.00", "500.00", "1.00")})
    poor = PlayerFactory(funded="4.00")
    sit(table, 1, poor)
    round_ = RoundFactory(table=table)
    assert Seat.objects.get(table=table, number=1).player is None
    assert "unseated" in kinds(round_)


def test_rules_9_nobody_joins_mid_round(eur):
    round_ = RoundFactory(table=ClassicTableFactory())
    bet(round_, PlayerFactory(funded="100.00"), seat=1)
    close_betting(round_id=round_.pk)
    late = PlayerFactory(funded="100.00")
    with pytest.raises(BettingClosed):
        bet(round_, late, seat=2)
    with pytest.raises(BettingClosed):
        bet(round_, late, type="behind", seat=1)
    assert balance(late) == D("100.00")


# --- RULES 6: bet behind ---------------------------------------------------------------------------

def test_rules_6_premium_no_bet_behind_own_seat_but_others_ok(eur):
    round_ = RoundFactory(table=PremiumTableFactory())
    a, b = PlayerFactory(funded="100.00"), PlayerFactory(funded="100.00")
    bet(round_, a, seat=1)
    bet(round_, b, seat=2)
    with pytest.raises(BehindOwnSeat):
        bet(round_, a, type="behind", seat=1)
    bet(round_, a, type="behind", seat=2)


def test_rules_6_classic_seated_player_never_bets_behind(eur):
    round_ = RoundFactory(table=ClassicTableFactory())
    a, b = PlayerFactory(funded="100.00"), PlayerFactory(funded="100.00")
    bet(round_, a, seat=1)
    bet(round_, b, seat=2)
    with pytest.raises(BehindOwnSeat):
        bet(round_, a, type="behind", seat=2)


def test_rules_6_behind_and_pair_only_on_occupied_seats(eur):
    round_ = RoundFactory(table=ClassicTableFactory())
    player = PlayerFactory(funded="100.00")
    with pytest.raises(SeatNotAllowed):
        bet(round_, player, type="behind", seat=3)
    with pytest.raises(SeatNotAllowed):
        bet(round_, player, type="pair", seat=3, stake="1.00")


@pytest.mark.parametrize("table_factory,side", [(ClassicTableFactory, "pair"), (PremiumTableFactory, "pairs")])
def test_rules_8_a_pair_bet_is_the_seated_players_or_a_bet_behind_players_of_that_seat(eur, table_factory, side):
    """RULES 8: a pair(s) bet on a seat is placed by the player seated there or by a player betting
    behind that seat; on another player's seat it is refused and takes no money."""
    round_ = RoundFactory(table=table_factory())
    owner, other, backer = (PlayerFactory(funded="100.00") for _ in range(3))
    bet(round_, owner, seat=3)
    bet(round_, other, seat=5)
    for player, seat in ((owner, 5), (backer, 3)):
        with pytest.raises(SeatNotAllowed, match=f"on seat {seat}"):
            bet(round_, player, type=side, seat=seat, stake="1.00")
    assert balance(owner) == balance(other) == D("90.00") and balance(backer) == D("100.00")
    bet(round_, owner, type=side, seat=3, stake="1.00")
    bet(round_, backer, type="behind", seat=3, stake="5.00")
    bet(round_, backer, type=side, seat=3, stake="1.00")
    assert balance(owner) == D("89.00") and balance(backer) == D("94.00")


def test_rules_6_follow_double_and_split_need_the_seat_move(eur):
    round_ = RoundFactory(table=PremiumTableFactory())
    a, b = PlayerFactory(funded="100.00"), PlayerFactory(funded="100.00")
    main = bet(round_, a, seat=1, key="m").bets[0]
    bet(round_, b, type="behind", seat=1, stake="5.00", key="bh")
    close_betting(round_id=round_.pk)
    deal_hand(round_, ["5H", "6D"], "seat:1")
    with pytest.raises(InvalidExtra):
        add_extra_stake(round_id=round_.pk, bet="bh", kind="follow_double")
    add_extra_stake(round_id=round_.pk, bet="m", kind="double", cards=["5H", "6D"])
    done = add_extra_stake(round_id=round_.pk, bet="bh", kind="follow_double")
    assert done.applied and done.extra.key == f"follow_double:{Bet.objects.get(record_id='bh').pk}"
    assert balance(b) == D("90.00") and Bet.objects.get(record_id="bh").follow_double
    assert keys("double:") == {f"double:{main.pk}"}


# --- RULES 4: extra stakes and fallbacks -----------------------------------------------------------

def closed_round(table, player, stake="10.00", seat=None, key="m"):
    round_ = RoundFactory(table=table)
    bet(round_, player, stake=stake, seat=seat, key=key)
    close_betting(round_id=round_.pk)
    return round_


def test_rules_4_double_debits_once_under_double_key(eur):
    player = PlayerFactory(funded="30.00")
    round_ = closed_round(BoundlessTableFactory(), player)
    deal_hand(round_, ["5H", "6D"])
    for _ in range(2):
        done = add_extra_stake(round_id=round_.pk, bet="m", kind="double", cards=["5H", "6D"])
    assert done.action == "double" and balance(player) == D("10.00")
    assert BetExtra.objects.count() == 1 and "extra_stake" in kinds(round_)


def test_rules_4_batch_of_extras_each_request_stands_alone_in_order(eur):
    player, other = PlayerFactory(funded="35.00"), PlayerFactory(funded="100.00")
    round_ = RoundFactory(table=BoundlessTableFactory())
    bet(round_, player, key="m")
    bet(round_, other, key="o")
    close_betting(round_id=round_.pk)
    deal_hand(round_, ["8H", "8D", "2C", "3C"], dealer=("AS", "7D"), insure=["o"])  # before the peek
    outcomes = add_extra_stakes(round_id=round_.pk, extras=[
        {"bet": "m", "kind": "split", "cards": ["8H", "8D"]},
        {"bet": "m", "kind": "double", "hand": 2, "cards": ["8D", "3C"]},  # needs the split just taken
        {"bet": "m", "kind": "double", "cards": ["8H", "2C"]},             # 0.00 left: falls back
        {"bet": "nope", "kind": "insurance"},
        {"bet": "o", "kind": "insurance"},                                  # taken: answers it again
        {"bet": "m", "kind": "split", "cards": ["8H", "8D"]},              # the same again: no second debit
    ])
    assert [(o.applied, o.action) for o in outcomes] == [
        (True, "split"), (True, "double"), (False, "hit"), (False, None), (True, "insurance"), (True, "split")]
    assert isinstance(outcomes[3].error, NotFound) and outcomes[0].extra == outcomes[5].extra
    m, o = Bet.objects.get(record_id="m"), Bet.objects.get(record_id="o")
    assert keys("split:") | keys("double:") | keys("insurance:") == {f"split:{m.pk}", f"double:{m.pk}:2",
                                                                      f"insurance:{o.pk}"}
    assert balance(player) == D("5.00") and balance(other) == D("85.00")
    assert kinds(round_).count("extra_stake") == 3 and kinds(round_).count("fallback") == 1


@pytest.mark.parametrize("table_factory,cards,action", [
    (PremiumTableFactory, ["TH", "2D"], "hit"),       # premium: always a hit
    (BoundlessTableFactory, ["TH", "2D"], "stand"),   # 12 > 11: stand
    (BoundlessTableFactory, ["5H", "6D"], "hit"),     # 11: hit
    (ClassicTableFactory, ["TH", "3D"], "stand"),     # classic [decision]: like boundless
])
def test_rules_4_double_without_balance_falls_back(eur, table_factory, cards, action):
    player = PlayerFactory(funded="10.00")
    table = table_factory()
    round_ = closed_round(table, player, seat=None if table.variant == "boundless" else 1)
    deal_hand(round_, cards, "player" if table.variant == "boundless" else "seat:1")
    done = add_extra_stake(round_id=round_.pk, bet="m", kind="double", cards=cards)
    assert (done.applied, done.action) == (False, action)
    assert balance(player) == D("0.00") and not BetExtra.objects.exists()
    assert RoundEvent.objects.get(round=round_, kind="fallback").payload["action"] == action


@pytest.mark.parametrize("cards,action", [(["5H", "5D"], "hit"), (["8H", "8D"], "stand")])
def test_rules_4_split_without_balance_falls_back(eur, cards, action):
    player = PlayerFactory(funded="10.00")
    round_ = closed_round(BoundlessTableFactory(), player)
    deal_hand(round_, cards)
    assert add_extra_stake(round_id=round_.pk, bet="m", kind="split", cards=cards).action == action


def test_rules_4_insurance_is_half_rounded_down_and_not_bought_without_balance(eur):
    rich, poor = PlayerFactory(funded="20.00"), PlayerFactory(funded="5.01")
    round_ = RoundFactory(table=BoundlessTableFactory(limits={"main": ("1.00", "100.00", "0.01")}))
    bet(round_, rich, stake="5.01", key="r")
    bet(round_, poor, stake="5.01", key="p")
    close_betting(round_id=round_.pk)
    show_up_card(round_)
    assert add_extra_stake(round_id=round_.pk, bet="r", kind="insurance").extra.amount == D("2.50")
    assert add_extra_stake(round_id=round_.pk, bet="p", kind="insurance").action is None


def test_rules_4_insurance_only_once_the_dealer_shows_an_ace(eur):
    """Insurance is an extra stake taken at decision time on a dealer ace: before the up card is
    reported, or on another up card, it is refused (every record would be invalid otherwise)."""
    player = PlayerFactory(funded="100.00")
    round_ = RoundFactory(table=BoundlessTableFactory())
    bet(round_, player, key="m")
    close_betting(round_id=round_.pk)
    with pytest.raises(InvalidExtra, match="up card is reported"):
        add_extra_stake(round_id=round_.pk, bet="m", kind="insurance")
    show_up_card(round_, "KD")
    with pytest.raises(InvalidExtra, match="ace only; the up card is KD"):
        add_extra_stake(round_id=round_.pk, bet="m", kind="insurance")
    assert balance(player) == D("90.00") and not BetExtra.objects.exists()
    report_play(round_id=round_.pk, events=[{"kind": "card_rescanned", "card": "AD", "to": "dealer"}])  # misread
    assert add_extra_stake(round_id=round_.pk, bet="m", kind="insurance").extra.amount == D("5.00")


def scan_cards(round_, *cards):
    """Report ``cards`` (``(card, to)`` pairs) as scanned, in order."""
    report_play(round_id=round_.pk, events=[{"kind": "card_scanned", "card": c, "to": to} for c, to in cards])


def test_rules_4_7_a_double_or_split_names_the_cards_scanned_and_takes_nothing_otherwise(eur):
    """A double or split is taken on the hand's cards as scanned (boundless: the shared c1 c2),
    never on cards that were not dealt: a split of a pair that is not the hand, a double of other
    cards, a split of the real non-pair. Refused, nothing debited."""
    ben, anna = PlayerFactory(funded="100.00"), PlayerFactory(funded="100.00")
    round_ = RoundFactory(table=BoundlessTableFactory())
    bet(round_, ben, key="ben")
    bet(round_, anna, key="anna")
    close_betting(round_id=round_.pk)
    scan_cards(round_, ("5H", "player"), ("9S", "dealer"), ("6D", "player"), ("7D", "dealer"))
    outcomes = add_extra_stakes(round_id=round_.pk, extras=[
        {"bet": "ben", "kind": "split", "cards": ["8H", "8D"]},
        {"bet": "anna", "kind": "double", "cards": ["2C", "3C"]},
        {"bet": "ben", "kind": "split", "cards": ["5H", "6D"]}])
    assert [type(o.error) for o in outcomes] == [InvalidExtra] * 3
    assert "not the hand's cards as scanned (5H 6D)" in str(outcomes[0].error)
    assert "non-pair" in str(outcomes[2].error)
    assert balance(ben) == balance(anna) == D("90.00") and not BetExtra.objects.exists()
    assert add_extra_stake(round_id=round_.pk, bet="anna", kind="double", cards=["5H", "6D"]).applied


def test_rules_4_7_boundless_split_hands_draw_from_the_start_of_the_shared_sequence(eur):
    """After a split the first hand is c1 and c3 (then c4...), the second c2 and the first card
    the first hand did not use: a double on either must name those cards, once they are scanned."""
    player = PlayerFactory(funded="100.00")
    round_ = RoundFactory(table=BoundlessTableFactory())
    bet(round_, player, key="m")
    close_betting(round_id=round_.pk)
    scan_cards(round_, ("8H", "player"), ("9S", "dealer"), ("8D", "player"), ("7D", "dealer"))
    add_extra_stake(round_id=round_.pk, bet="m", kind="split", cards=["8H", "8D"])
    with pytest.raises(InvalidExtra, match="as scanned"):  # c3 is not out yet
        add_extra_stake(round_id=round_.pk, bet="m", kind="double", cards=["8H", "3C"])
    scan_cards(round_, ("3C", "player"), ("2S", "player"))
    with pytest.raises(InvalidExtra, match="as scanned"):  # hand 2 takes a card after hand 1's
        add_extra_stake(round_id=round_.pk, bet="m", kind="double", hand=2, cards=["8D", "3C"])
    add_extra_stake(round_id=round_.pk, bet="m", kind="double", cards=["8H", "3C"])
    add_extra_stake(round_id=round_.pk, bet="m", kind="double", hand=2, cards=["8D", "2S"])
    assert balance(player) == D("60.00")


def test_rules_4_a_seats_split_hands_are_played_in_turn_on_the_seats_cards(eur):
    """A seat plays its first split hand (its first card, then the seat's third card on) to the
    end, then its second (its second card and the seat's last cards)."""
    player = PlayerFactory(funded="100.00")
    round_ = closed_round(PremiumTableFactory(), player, seat=2)
    scan_cards(round_, ("8H", "seat:2"), ("9S", "dealer"), ("8D", "seat:2"), ("7D", "dealer"))
    with pytest.raises(InvalidExtra, match="as scanned"):
        add_extra_stake(round_id=round_.pk, bet="m", kind="split", cards=["8H", "8S"])
    add_extra_stake(round_id=round_.pk, bet="m", kind="split", cards=["8H", "8D"])
    scan_cards(round_, ("3C", "seat:2"))
    with pytest.raises(InvalidExtra, match="as scanned"):  # the second hand has no card yet
        add_extra_stake(round_id=round_.pk, bet="m", kind="double", hand=2, cards=["8D", "3C"])
    add_extra_stake(round_id=round_.pk, bet="m", kind="double", cards=["8H", "3C"])
    scan_cards(round_, ("TS", "seat:2"), ("2H", "seat:2"))
    with pytest.raises(InvalidExtra, match="as scanned"):  # the first hand is over
        add_extra_stake(round_id=round_.pk, bet="m", kind="double", hand=2, cards=["8D", "TS"])
    add_extra_stake(round_id=round_.pk, bet="m", kind="double", hand=2, cards=["8D", "2H"])
    assert balance(player) == D("60.00")


@pytest.mark.parametrize("table_factory", [PremiumTableFactory, BoundlessTableFactory])
def test_rules_3_no_decision_before_the_peek_nor_after_a_dealer_blackjack(eur, table_factory):
    """With a hole card, doubles, splits and follows come after the peek: not before the hole card
    is reported, never once it makes a dealer blackjack (the round ended at the peek)."""
    table = table_factory()
    seated, behind = PlayerFactory(funded="100.00"), PlayerFactory(funded="100.00")
    round_ = RoundFactory(table=table)
    place = "player" if table.seats is None else "seat:1"
    bet(round_, seated, seat=None if table.seats is None else 1, key="m")
    if table.seats is not None:
        bet(round_, behind, type="behind", seat=1, key="b")
    close_betting(round_id=round_.pk)
    scan_cards(round_, ("5H", place), ("AS", "dealer"), ("6D", place))
    with pytest.raises(InvalidExtra, match="after the peek"):
        add_extra_stake(round_id=round_.pk, bet="m", kind="double", cards=["5H", "6D"])
    add_extra_stake(round_id=round_.pk, bet="m", kind="insurance")
    scan_cards(round_, ("KD", "dealer"))
    with pytest.raises(InvalidExtra, match="the round ended at the peek"):
        add_extra_stake(round_id=round_.pk, bet="m", kind="double", cards=["5H", "6D"])
    assert balance(seated) == D("85.00") and list(BetExtra.objects.values_list("kind", flat=True)) == ["insurance"]


@pytest.mark.parametrize("hole", ["7D", "KD"])
@pytest.mark.parametrize("table_factory", [PremiumTableFactory, BoundlessTableFactory])
def test_rules_3_4_insurance_is_decided_before_the_peek(eur, table_factory, hole):
    """Insurance is a bet on the dealer's blackjack, decided on the ace up card before the hole
    card is shown: once the hole card is reported (a blackjack or not) it is refused and takes
    nothing, on a seat bet as on a bet behind; the insurance taken before the peek stands."""
    table = table_factory()
    early, late, behind = (PlayerFactory(funded="100.00") for _ in range(3))
    round_ = RoundFactory(table=table)
    place = "player" if table.seats is None else "seat:1"
    bet(round_, early, seat=None if table.seats is None else 1, key="early")
    bet(round_, late, seat=None if table.seats is None else 2, key="late")
    if table.seats is not None:
        bet(round_, behind, type="behind", seat=1, key="behind")
    close_betting(round_id=round_.pk)
    scan_cards(round_, ("5H", place), ("AS", "dealer"), ("6D", place))
    add_extra_stake(round_id=round_.pk, bet="early", kind="insurance")
    scan_cards(round_, (hole, "dealer"))
    for record_id in ("late", "behind") if table.seats is not None else ("late",):
        with pytest.raises(InvalidExtra, match="before the peek"):
            add_extra_stake(round_id=round_.pk, bet=record_id, kind="insurance")
    assert balance(early) == D("85.00") and balance(late) == D("90.00")
    assert balance(behind) == D("90.00" if table.seats is not None else "100.00")
    assert list(BetExtra.objects.values_list("bet__record_id", "kind")) == [("early", "insurance")]


def test_rules_3_classic_no_extra_once_the_dealers_second_card_is_out(eur):
    """Classic deals the dealer's second card once every seat has played: no extra after it."""
    player = PlayerFactory(funded="100.00")
    round_ = closed_round(ClassicTableFactory(), player, seat=1)
    scan_cards(round_, ("5H", "seat:1"), ("AS", "dealer"), ("6D", "seat:1"), ("KD", "dealer"))
    for kind, cards in (("double", ["5H", "6D"]), ("insurance", None)):
        with pytest.raises(InvalidExtra, match="second card is out"):
            add_extra_stake(round_id=round_.pk, bet="m", kind=kind, cards=cards)
    assert balance(player) == D("90.00") and not BetExtra.objects.exists()


def test_rules_6_follows_in_the_same_batch_as_the_seats_double_and_split_are_taken_in_order(eur):
    """A batch is taken in order: a bet behind follows the seat's double or split asked for
    earlier in the same batch."""
    table = ClassicTableFactory()
    splitter, doubler, behind = (PlayerFactory(funded="100.00") for _ in range(3))
    round_ = RoundFactory(table=table)
    bet(round_, splitter, key="s", seat=3)
    bet(round_, doubler, key="d", seat=5)
    bet(round_, behind, key="b3", type="behind", seat=3)
    bet(round_, behind, key="b5", type="behind", seat=5)
    close_betting(round_id=round_.pk)
    scan_cards(round_, ("8H", "seat:3"), ("5H", "seat:5"), ("9S", "dealer"), ("8D", "seat:3"), ("6D", "seat:5"))
    outcomes = add_extra_stakes(round_id=round_.pk, extras=[
        {"bet": "s", "kind": "split", "cards": ["8H", "8D"]}, {"bet": "b3", "kind": "follow_split"},
        {"bet": "d", "kind": "double", "cards": ["5H", "6D"]}, {"bet": "b5", "kind": "follow_double"}])
    assert [(o.applied, o.error) for o in outcomes] == [(True, None)] * 4
    assert balance(behind) == D("60.00")
    assert Bet.objects.get(record_id="b3").follow_split and Bet.objects.get(record_id="b5").follow_double


def test_rules_4_extras_fit_the_bet(eur):
    player = PlayerFactory(funded="100.00")
    round_ = RoundFactory(table=BoundlessTableFactory())
    bet(round_, player, key="m")
    bet(round_, player, type="lucky_trio", stake="1.00", key="lt")
    with pytest.raises(IllegalTransition):  # betting still open
        add_extra_stake(round_id=round_.pk, bet="m", kind="insurance")
    close_betting(round_id=round_.pk)
    deal_hand(round_, ["5H", "6D"])
    with pytest.raises(InvalidExtra):
        add_extra_stake(round_id=round_.pk, bet="lt", kind="double", cards=["5H", "6D"])
    with pytest.raises(InvalidExtra, match="was not split"):  # hand 2 without a split
        add_extra_stake(round_id=round_.pk, bet="m", kind="double", hand=2, cards=["5H", "6D"])
    with pytest.raises(NotFound):
        add_extra_stake(round_id=round_.pk, bet="nope", kind="insurance")


@pytest.mark.parametrize("flag", ["follow_double", "follow_split"])
def test_rules_6_a_record_may_not_follow_a_move_the_bet_behind_did_not_follow(eur, flag):
    """A bet behind follows its seat's double or split only by the extra stake it took: a record
    that says it followed a move it took no stake for (here, a seat that only stood) is invalid."""
    from tables.exceptions import InvalidRecord
    from tests.factories import scan

    table = ClassicTableFactory()
    seated, behind = PlayerFactory(funded="100.00"), PlayerFactory(funded="100.00")
    round_ = RoundFactory(table=table)
    bet(round_, seated, seat=1, key="m")
    bet(round_, behind, type="behind", seat=1, stake="5.00", key="b")
    close_betting(round_id=round_.pk)
    record = {"format": "round-record/1", "variant": "classic", "round": round_.external_id,
              "shoe_round": round_.shoe_round, "currency": "EUR", "dealer": ["TC", "8S"],
              "seats": {"1": {"cards": ["9H", "7D"], "actions": ["stand"]}},
              "bets": [{"id": "m", "player": seated.game_code, "type": "main", "seat": 1, "stake": "10.00"},
                       {"id": "b", "player": behind.game_code, "type": "behind", "seat": 1, "stake": "5.00",
                        flag: True}]}
    scan(round_.pk, record)
    with pytest.raises(InvalidRecord, match=f"no {flag} stake") as error:
        record_result(round_id=round_.pk, record=record)
    assert error.value.extra["field"] == f"bets[1].{flag}" and Round.objects.get(pk=round_.pk).record is None
    record["bets"][1][flag] = False
    record_result(round_id=round_.pk, record=record)


# --- RULES 10: suspend, resume, cancel -------------------------------------------------------------

def test_rules_10_cancel_refunds_every_stake_and_extra(eur):
    player = PlayerFactory(funded="100.00")
    round_ = closed_round(BoundlessTableFactory(), player)
    deal_hand(round_, ["5H", "6D"])
    add_extra_stake(round_id=round_.pk, bet="m", kind="double", cards=["5H", "6D"])
    assert balance(player) == D("80.00")
    pk = Bet.objects.get().pk
    cancel(round_id=round_.pk, reason="scanner fault")
    round_.refresh_from_db()
    assert round_.state == Round.State.VOIDED and round_.cancelled_at and round_.voided_at
    assert balance(player) == D("100.00")
    assert keys("refund:") == {f"refund:{pk}", f"refund:double:{pk}"}
    assert Bet.objects.get().state == Bet.State.REFUNDED
    assert kinds(round_)[-3:] == ["cancelled", "bet_refunded", "voided"]
    events = kinds(round_)
    assert cancel(round_id=round_.pk, reason="again").state == Round.State.VOIDED  # a replay: nothing changes
    assert kinds(round_) == events and balance(player) == D("100.00")


def test_rules_10_suspend_resume_and_illegal_transitions(eur):
    round_ = RoundFactory(table=BoundlessTableFactory())
    with pytest.raises(IllegalTransition):
        suspend(round_id=round_.pk, reason="fault")  # OPEN: not suspendable
    close_betting(round_id=round_.pk)
    with pytest.raises(IllegalTransition):
        close_betting(round_id=round_.pk)
    suspend(round_id=round_.pk, reason="misread card")
    with pytest.raises(IllegalTransition):
        record_result(round_id=round_.pk, record={})
    resume(round_id=round_.pk)
    assert Round.objects.get(pk=round_.pk).state == Round.State.CLOSED
    suspend(round_id=round_.pk, reason="again")
    cancel(round_id=round_.pk, reason="unresolved")
    assert Round.objects.get(pk=round_.pk).state == Round.State.VOIDED
    assert kinds(round_) == ["opened", "betting_closed", "suspended", "resumed", "suspended", "cancelled", "voided"]


def test_rules_10_classic_host_disconnect_reshuffles_the_shoe(eur):
    table = ClassicTableFactory()
    round_ = RoundFactory(table=table)
    cancel(round_id=round_.pk, reason="host disconnected", host_disconnected=True)
    with pytest.raises(IllegalTransition):
        RoundFactory(table=table, shoe=1)
    assert RoundFactory(table=table, shoe=2).shoe_round == 1


def test_open_round_is_idempotent_and_one_round_in_play_per_table(eur):
    table = TableFactory()
    round_ = open_round(table_code=table.code, external_id="X-1", shoe=1, burn_count=2)
    assert open_round(table_code=table.code, external_id="X-1", shoe=1, burn_count=2).pk == round_.pk
    with pytest.raises(IllegalTransition):
        open_round(table_code=table.code, external_id="X-2", shoe=1)
    with pytest.raises(NotFound):
        open_round(table_code="nope", external_id="X-3", shoe=1)


@pytest.mark.parametrize("kind,cards,hand,dealt,why", [
    ("double", ["2H", "3D", "6C"], 1, ["2H", "3D", "6C"], "3 cards"),      # a double on three cards
    ("split", ["5H", "6D"], 1, ["5H", "6D"], "non-pair"),                  # a split of a non-pair
    ("double", ["AH", "TD"], 1, ["AH", "TD"], "finished"),                 # a blackjack is finished
    ("double", ["AD", "5C"], 2, ["AH", "AD", "KC", "5C"], "split aces"),  # split aces take no double
])
def test_rules_4_an_illegal_double_or_split_takes_no_money(eur, kind, cards, hand, dealt, why):
    player = PlayerFactory(funded="100.00")
    round_ = closed_round(BoundlessTableFactory(), player)
    deal_hand(round_, dealt)
    if hand == 2:
        add_extra_stake(round_id=round_.pk, bet="m", kind="split", cards=["AH", "AD"])
    before = balance(player)
    with pytest.raises(InvalidExtra, match=why):
        add_extra_stake(round_id=round_.pk, bet="m", kind=kind, hand=hand, cards=cards)
    assert balance(player) == before and not BetExtra.objects.filter(kind=kind, hand=hand).exists()
