"""The engine's seat and extra-stake rules (RULES 4, 6, 9, 10): who sits, bets behind, premium's
mirrored stakes, unseating; which extra stakes a bet takes, what they cost, what comes first."""
from decimal import Decimal

import pytest

from tables.engine import ruleset
from tables.engine.extras import (
    extra_kinds,
    extra_stake,
    own_prerequisite,
    seat_prerequisite,
    why_extra_refused,
    why_not_now,
)
from tables.engine.seating import (
    half_stake,
    keeps_seat,
    may_take_seat,
    mirrored_stakes,
    seats_emptied,
    unseated_after,
    why_no_bet_behind,
    why_no_seat,
)

D = Decimal
CLASSIC, PREMIUM, BOUNDLESS = ruleset("classic"), ruleset("premium"), ruleset("boundless")


def test_trial_accounts_and_play_for_fun_money_never_sit():
    """RULES 9."""
    assert may_take_seat(trial=False, play_for_fun=False)
    assert not may_take_seat(trial=True, play_for_fun=False)
    assert not may_take_seat(trial=False, play_for_fun=True)


def test_seats_per_player_and_bets_behind():
    """RULES 6, 9: classic one seat and no bet behind once seated; premium two, never behind one's own."""
    assert why_no_seat(CLASSIC, seats_held=0, behind_any=False) is None
    assert "at most 1" in why_no_seat(CLASSIC, seats_held=1, behind_any=False)
    assert "betting behind" in why_no_seat(CLASSIC, seats_held=0, behind_any=True)
    assert why_no_seat(PREMIUM, seats_held=1, behind_any=True) is None
    assert "at most 2" in why_no_seat(PREMIUM, seats_held=2, behind_any=False)
    assert why_no_bet_behind(PREMIUM, own_seat=False, seats_held=2) is None
    assert "own seat" in why_no_bet_behind(PREMIUM, own_seat=True, seats_held=0)
    assert "seated player" in why_no_bet_behind(CLASSIC, own_seat=False, seats_held=1)
    assert why_no_bet_behind(CLASSIC, own_seat=False, seats_held=0) is None
    assert "no bets behind" in why_no_bet_behind(BOUNDLESS, own_seat=False, seats_held=0)


@pytest.mark.parametrize("stake, available, step, minimum, expected", [
    ("10.00", "20.00", "1.00", "1.00", ("10.00", "10.00")),  # the balance covers both: mirrored
    ("10.00", "19.99", "1.00", "1.00", ("5.00", "5.00")),  # else split equally
    ("7.00", "10.00", "2.00", "2.00", ("2.00", "2.00")),  # each half rounded down to the chip step
    ("3.00", "3.00", "1.00", None, ("1.00", "1.00")),
])
def test_premium_mirrors_a_seat_stake_or_splits_it(stake, available, step, minimum, expected):
    """RULES 9 [decision]: rounded down to the table's chip step."""
    assert mirrored_stakes(D(stake), available=D(available), step=D(step),
                           minimum=None if minimum is None else D(minimum)) == tuple(D(x) for x in expected)
    assert half_stake(D(stake), D(step)) == D(expected[0]) or D(available) >= 2 * D(stake)


def test_a_split_stake_below_the_minimum_is_refused():
    with pytest.raises(ValueError, match="below the minimum"):
        mirrored_stakes(D("5.00"), available=D("5.00"), step=D("1.00"), minimum=D("5.00"))
    with pytest.raises(ValueError):
        mirrored_stakes(D("1.00"), available=D("1.00"), step=D("1.00"), minimum=None)


def test_seats_emptied_and_unseating():
    """RULES 6: a seat without a seat bet is emptied (its bets behind and pairs refunded); RULES 9:
    one round of grace, unseated at the second; unseated below the table minimum."""
    assert seats_emptied(CLASSIC, seats_with_bets={1, 2, 3}, seats_with_seat_bet={1, 3}) == {2}
    assert seats_emptied(BOUNDLESS, seats_with_bets=set(), seats_with_seat_bet=set()) == set()
    assert not unseated_after(CLASSIC, 1) and unseated_after(CLASSIC, 2)
    assert keeps_seat(D("5.00"), D("5.00")) and not keeps_seat(D("4.99"), D("5.00")) and keeps_seat(D(0), None)


def test_only_classic_reshuffles_on_a_host_disconnection():
    """RULES 10."""
    assert [r.reshuffle_on_host_disconnect for r in (CLASSIC, PREMIUM, BOUNDLESS)] == [True, False, False]


def test_which_extra_stakes_a_bet_takes_and_where():
    """RULES 4, 6: a main bet doubles, splits and insures; a bet behind insures and follows; a side
    bet takes none; hand 2 (the second split hand) takes only a double."""
    assert extra_kinds(PREMIUM, "main") == {"double", "split", "insurance"}
    assert extra_kinds(PREMIUM, "behind") == {"insurance", "follow_double", "follow_split"}
    assert extra_kinds(BOUNDLESS, "behind") == set() and extra_kinds(BOUNDLESS, "pairs") == set()
    assert why_extra_refused(CLASSIC, "main", "double", 2) is None
    assert why_extra_refused(CLASSIC, "behind", "follow_double", 2) is None
    assert "no split on hand 2" == why_extra_refused(CLASSIC, "main", "split", 2)
    assert "takes no follow_split" in why_extra_refused(CLASSIC, "main", "follow_split", 1)
    assert "takes no double" in why_extra_refused(CLASSIC, "pair", "double", 1)


def test_extra_stake_amounts_and_prerequisites():
    """RULES 4: insurance is half the stake rounded down; a double or split costs the stake;
    a second hand needs the split; a follow needs its seat's action."""
    assert extra_stake("insurance", D("5.05"), 2) == D("2.52")
    assert extra_stake("insurance", D("0.01"), 2) == D("0.00")
    assert extra_stake("double", D("5.05"), 2) == D("5.05")
    assert own_prerequisite("double", 2) == "split" and own_prerequisite("follow_double", 2) == "follow_split"
    assert own_prerequisite("double", 1) is None
    assert seat_prerequisite("follow_split") == "split" and seat_prerequisite("insurance") is None


@pytest.mark.parametrize("rules", [PREMIUM, BOUNDLESS])
def test_with_a_hole_card_insurance_comes_before_the_peek_and_the_other_extras_after_it(rules):
    """RULES 3, 4: insurance is decided on the ace up card, before the hole card is shown (the
    peek); doubles, splits and follows once the hole card is out, never on a dealer blackjack."""
    assert why_not_now(rules, "insurance", ["AS"]) is None
    for hole in ("7D", "KD"):
        assert "before the peek" in why_not_now(rules, "insurance", ["AS", hole])
    assert "after the peek" in why_not_now(rules, "double", ["AS"])
    assert why_not_now(rules, "double", ["AS", "7D"]) is None
    assert "ended at the peek" in why_not_now(rules, "split", ["AS", "KD"])


def test_without_a_hole_card_every_extra_comes_while_the_dealer_has_one_card():
    """RULES 3 (classic): the dealer's second card comes once every player has finished."""
    for kind in ("insurance", "double", "follow_split"):
        assert why_not_now(CLASSIC, kind, ["AS"]) is None
        assert "second card is out" in why_not_now(CLASSIC, kind, ["AS", "7D"])
    assert "up card is reported" in why_not_now(CLASSIC, "double", [])
    assert "ace only" in why_not_now(PREMIUM, "insurance", ["KD"])
