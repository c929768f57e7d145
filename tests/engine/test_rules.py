"""One test (or more) per line of docs/rules.md sections 3-8; [decision]s are named in the test."""
import pytest

from tables.engine import InvalidRecord, fallback, legal_actions, ruleset, settle
from tables.engine.rules import DEFAULT_PAY_TABLES
from tests.engine.engine_helpers import D, amounts, boundless, main, seated

CL, PR, BL = ruleset("classic"), ruleset("premium"), ruleset("boundless")


# ----------------------------------------------------------------------------- RULES 3

def test_rules_3_classic_dealer_second_card_after_players_and_draws():
    rec = seated("classic", "6S TD 5H", {1: ("TS 7H", "stand")}, [main(1)])
    assert amounts(rec)["b1"] == (D("10"), D("0"))  # dealer 21


def test_rules_3_decision_no_live_hand_dealer_draws_no_more():
    # classic: the only hand busts -> dealer has just its two cards
    rec = seated("classic", "6S TD", {1: ("TS 6H 9C", "hit")}, [main(1)])
    assert amounts(rec)["b1"] == (D("10"), D("0"))
    with pytest.raises(InvalidRecord, match="^dealer: too many"):
        settle(seated("classic", "6S TD 5H", {1: ("TS 6H 9C", "hit")}, [main(1)]))
    # premium: surrendered -> no draw
    assert amounts(seated("premium", "6S TD", {1: ("TS 6H", "surrender")}, [main(1)]))["b1"][1] == D("5")


def test_rules_3_premium_peek_dealer_blackjack_ends_round_at_once():
    rec = seated("premium", "AS KD", {1: ("9S 7D", "")}, [main(1)])
    assert amounts(rec)["b1"] == (D("10"), D("0"))
    with pytest.raises(InvalidRecord, match=r"^seats\.1\.actions\[0\]: hit not allowed: the round ended"):
        settle(seated("premium", "AS KD", {1: ("9S 7D 2C", "hit")}, [main(1)]))


def test_rules_3_premium_all_seated_blackjack_ends_round():
    rec = seated("premium", "9S 6D", {1: ("AS KD", ""), 2: ("TC AH", "")}, [main(1), main(2)])
    assert amounts(rec)["b1"] == (D("10"), D("25"))
    with pytest.raises(InvalidRecord, match="^dealer"):
        settle(seated("premium", "9S 6D 2C", {1: ("AS KD", "")}, [main(1)]))


def test_rules_3_boundless_dealer_always_completes():
    # the player busts but the dealer still draws (bust bonus depends on it)
    rec = boundless("TS 6D 8C", "TH 6C 9S", [{"type": "main", "stake": "10.00", "actions": "hit"},
                                             {"type": "bust_bonus", "stake": "1.00"}])
    assert amounts(rec) == {"b1": (D("10"), D("0")), "b2": (D("1"), D("2"))}
    with pytest.raises(InvalidRecord, match="^dealer: too few"):
        settle(boundless("TS 6D", "TH 6C 9S", [{"type": "main", "stake": "10.00", "actions": "hit"}]))


def test_rules_3_dealer_stands_on_soft_17():
    rec = seated("premium", "AS 6D", {1: ("TS 8H", "stand")}, [main(1)])
    assert amounts(rec)["b1"][1] == D("20")
    with pytest.raises(InvalidRecord, match="^dealer: too many"):
        settle(seated("premium", "AS 6D 2C", {1: ("TS 8H", "stand")}, [main(1)]))


def test_rules_3_dealer_hits_16():
    with pytest.raises(InvalidRecord, match="^dealer: too few"):
        settle(seated("premium", "TS 6D", {1: ("TS 8H", "stand")}, [main(1)]))


def test_rules_3_seats_act_in_seat_order_each_with_own_cards():
    rec = seated("premium", "TS 7D", {3: ("9C 2D TH", "double"), 1: ("5S 5H 9D", "hit stand")},
                 [main(3), main(1)])
    r = settle(rec)
    assert list(r.seats) == [1, 3]
    assert r.bets["b1"].returned == D("40") and r.bets["b2"].returned == D("20")


# ----------------------------------------------------------------------------- RULES 4

def test_rules_4_hit_repeats_and_stand():
    rec = seated("premium", "TS 7D", {1: ("2S 3H 4D 5C 2H", "hit hit hit stand")}, [main(1)])
    assert amounts(rec)["b1"][1] == D("0")  # 16 vs 17


def test_rules_4_decision_classic_double_on_split_hand_allowed():
    rec = seated("classic", "TS 7D", {1: ("8S 8H 3C TD 9C", "split double stand")}, [main(1)])
    assert amounts(rec)["b1"] == (D("30"), D("50"))  # 21 doubled wins 40, 17 pushes 10


def test_rules_4_double_not_on_split_aces():
    with pytest.raises(InvalidRecord, match=r"^seats\.1\.actions\[1\]: .*split aces|finished"):
        settle(seated("premium", "TS 7D", {1: ("AS AH 5C 6D 9C", "split double")}, [main(1)]))


def test_rules_4_split_equal_value_and_no_resplit():
    assert "split" in legal_actions(PR, ["KS", "TD"], "7H")
    assert "split" not in legal_actions(PR, ["KS", "9D"], "7H")
    assert "split" not in legal_actions(PR, ["8S", "8D"], "7H", split=True)
    with pytest.raises(InvalidRecord, match=r"^seats\.1\.actions\[1\]: split not allowed on a split hand"):
        settle(seated("premium", "TS 7D", {1: ("8S 8H 8C 8D TC TD", "split split")}, [main(1)]))


def test_rules_4_split_aces_one_card_each_21_is_not_blackjack():
    rec = seated("premium", "TS 9D", {1: ("AS AH KC 9C", "split")}, [main(1)])
    r = settle(rec)
    b = r.bets["b1"]
    assert [h.outcome for h in b.hands] == ["win", "win"]
    assert b.returned == D("40")  # 1:1, not 3:2


def test_rules_4_surrender_only_first_two_cards_before_action_vs_2_to_9():
    assert "surrender" in legal_actions(PR, ["TS", "6D"], "9H")
    assert "surrender" not in legal_actions(PR, ["TS", "6D"], "AH")
    assert "surrender" not in legal_actions(PR, ["TS", "6D"], "KH")
    assert "surrender" not in legal_actions(PR, ["TS", "2D", "3D"], "9H", actions=("hit",))
    assert "surrender" not in legal_actions(PR, ["TS", "6D"], "9H", split=True)


def test_rules_4_insurance_allowed_with_blackjack():
    rec = seated("premium", "AS 9D", {1: ("AH KH", "")}, [main(1, insurance=True)])
    assert amounts(rec)["b1"] == (D("15"), D("25"))  # BJ paid 3:2, insurance 5 lost


def test_rules_4_hand_at_21_stands_automatically():
    with pytest.raises(InvalidRecord, match=r"^seats\.1\.actions\[1\]"):
        settle(seated("premium", "TS 7D", {1: ("5S 6H TD", "hit stand")}, [main(1)]))


def test_rules_4_fallbacks_for_insufficient_balance():
    """RULES 4: premium double -> hit; classic [decision] / boundless double -> hit if <= 11 else
    stand; split -> hit if <= 11 else stand; insurance -> not bought."""
    assert fallback(PR, "double", 15) == "hit"
    for r in (CL, BL):
        assert fallback(r, "double", 11) == "hit" and fallback(r, "double", 12) == "stand"
    for r in (CL, PR, BL):
        assert fallback(r, "split", 10) == "hit" and fallback(r, "split", 16) == "stand"
        assert fallback(r, "insurance", 20) is None


def test_rules_4_auto_play_hits_to_12_plus_and_marks_auto():
    rec = seated("premium", "TS 8D", {1: ("2S 3H 4D 5C", "hit")}, [main(1)])
    r = settle(rec)
    h = r.bets["b1"].hands[0]
    assert h.decisions == (("hit", "player"), ("hit", "auto"), ("stand", "auto"))
    assert h.score == 14


def test_rules_4_auto_play_applies_to_each_split_hand():
    rec = seated("premium", "TS 8D", {1: ("5S 5H 2C TD 3C 2D AH", "split")}, [main(1)])
    b = settle(rec).bets["b1"]
    assert [h.score for h in b.hands] == [17, 21]
    assert b.returned == D("20")  # 17 < 18 lose, 21 wins


def test_rules_4_decision_half_amounts_round_down():
    rec = seated("premium", "9S 8D", {1: ("TS 6H", "surrender")}, [main(1, stake="0.05")])
    assert amounts(rec)["b1"] == (D("0.05"), D("0.02"))
    rec = seated("premium", "AS 8D", {1: ("TS 8H", "stand")}, [main(1, stake="0.05", insurance=True)])
    assert amounts(rec)["b1"] == (D("0.07"), D("0"))  # insurance 0.02


# ----------------------------------------------------------------------------- RULES 5

@pytest.mark.parametrize("player,dealer,expected", [
    ("AS KD", "TS AD", "10"),      # dealer BJ pushes player BJ (premium peek)
    ("TS QD", "TS AD", "0"),       # dealer BJ beats 20
    ("AS KD", "TS 9D", "25"),      # BJ 3:2 beats everything else
    ("TS QD", "TS 9D", "20"),      # win 1:1
    ("TS 9D", "TS 9D", "10"),      # push
    ("TS 8D", "TS 9D", "0"),       # lower loses
])
def test_rules_5_outcomes(player, dealer, expected):
    actions = "stand" if dealer != "TS AD" and player != "AS KD" else ""
    rec = seated("premium", dealer, {1: (player, actions)}, [main(1)])
    assert amounts(rec)["b1"][1] == D(expected)


def test_rules_5_bust_loses_even_if_dealer_busts():
    rec = seated("premium", "TS 6D 8C", {1: ("TS 6H 9C", "hit"), 2: ("TS 7H", "stand")}, [main(1), main(2)])
    assert amounts(rec) == {"b1": (D("10"), D("0")), "b2": (D("10"), D("20"))}


def test_rules_5_decision_classic_late_dealer_bj_returns_double_extra():
    rec = seated("classic", "TS AD", {1: ("6S 5D 9C", "double")}, [main(1)])
    b = settle(rec).bets["b1"]
    assert (b.staked, b.returned) == (D("20"), D("10"))
    assert b.hands[0].note


def test_rules_5_decision_classic_late_dealer_bj_returns_second_split_hand():
    rec = seated("classic", "AS KD", {1: ("8S 8H 3C TD 9C", "split double stand")},
                 [main(1), {"type": "behind", "seat": 1, "stake": "4.00", "follow_split": True,
                            "follow_double": True}])
    a = amounts(rec)
    assert a["b1"] == (D("30"), D("20"))  # original 10 lost; double 10 and split 10 returned
    assert a["b2"] == (D("12"), D("8"))


def test_rules_5_premium_peek_only_original_stake_at_risk():
    # premium: peek -> no double possible; the whole (original) stake is lost
    assert amounts(seated("premium", "TS AD", {1: ("6S 5D", "")}, [main(1)]))["b1"] == (D("10"), D("0"))


def test_rules_5_decision_winnings_round_down():
    rec = seated("premium", "TS 9D", {1: ("AS KD", "")}, [main(1, stake="0.03")])
    assert amounts(rec)["b1"] == (D("0.03"), D("0.07"))  # 0.03 + 0.045 -> 0.04


# ----------------------------------------------------------------------------- RULES 6

def _behind(**kw):
    return {"type": "behind", "seat": 1, "stake": "10.00", **kw}


def test_rules_6_behind_follow_double_yes_and_no():
    rec = seated("premium", "TS 7D", {1: ("6S 5D TC", "double")},
                 [main(1), _behind(follow_double=True), _behind(follow_double=False)])
    assert amounts(rec) == {"b1": (D("20"), D("40")), "b2": (D("20"), D("40")), "b3": (D("10"), D("20"))}


def test_rules_6_behind_not_following_split_rides_first_hand_only():
    rec = seated("premium", "TS 7D", {1: ("8S 8H 2C 9D", "split stand stand")},
                 [main(1), _behind(follow_split=False), _behind(follow_split=True)])
    a = amounts(rec)  # hand1 10 loses, hand2 17 pushes
    assert a == {"b1": (D("20"), D("10")), "b2": (D("10"), D("0")), "b3": (D("20"), D("10"))}


def test_rules_6_behind_surrenders_with_seat():
    rec = seated("premium", "9S 7D", {1: ("TS 6H", "surrender")}, [main(1), _behind(stake="5.00")])
    assert amounts(rec)["b2"] == (D("5"), D("2.50"))


def test_rules_6_behind_insurance_independent():
    rec = seated("premium", "AS KD", {1: ("TS 9H", "")}, [main(1), _behind(insurance=True)])
    assert amounts(rec) == {"b1": (D("10"), D("0")), "b2": (D("15"), D("15"))}


def test_rules_6_classic_seated_player_may_not_bet_behind():
    rec = seated("classic", "TS 7D", {1: ("TS 9H", "stand"), 2: ("TS 8H", "stand")},
                 [main(1, player="p"), main(2, player="q"), _behind(seat=2, player="p")])
    with pytest.raises(InvalidRecord, match=r"^bets\[2\]\.player"):
        settle(rec)


def test_rules_6_premium_seated_may_bet_behind_others_not_own():
    ok = seated("premium", "TS 7D", {1: ("TS 9H", "stand"), 2: ("TS 8H", "stand")},
                [main(1, player="p"), main(2, player="q"), _behind(seat=2, player="p")])
    assert amounts(ok)["b3"] == (D("10"), D("20"))
    bad = seated("premium", "TS 7D", {1: ("TS 9H", "stand")}, [main(1, player="p"), _behind(player="p")])
    with pytest.raises(InvalidRecord, match=r"^bets\[1\]\.seat"):
        settle(bad)


def test_rules_6_behind_not_in_boundless():
    rec = boundless("TS 7D", "TS 9H", [{"type": "behind", "stake": "1.00"}])
    with pytest.raises(InvalidRecord, match=r"^bets\[0\]\.type"):
        settle(rec)


# ----------------------------------------------------------------------------- RULES 7

def test_rules_7_each_player_takes_from_start_of_shared_sequence():
    rec = boundless("TS 7D", "2S 3H 4D 5C 9S", [
        {"type": "main", "stake": "10.00", "actions": "hit hit hit"},  # 2+3+4+5+9 = 23 bust
        {"type": "main", "stake": "10.00", "actions": "hit hit stand"},      # 2+3+4+5 = 14
        {"type": "main", "stake": "10.00", "actions": "double"},             # 2+3+4 = 9
    ])
    r = settle(rec)
    assert [h.cards for h in r.bets["b2"].hands] == [("2S", "3H", "4D", "5C")]
    assert r.bets["b3"].hands[0].cards == ("2S", "3H", "4D")
    assert r.bets["b1"].hands[0].score == 23


def test_rules_7_cards_left_over_or_too_few_in_shared_sequence():
    with pytest.raises(InvalidRecord, match="^player_cards: 1 card"):
        settle(boundless("TS 7D", "TS 9H 2C", [{"type": "main", "stake": "1.00", "actions": "stand"}]))
    with pytest.raises(InvalidRecord, match="^player_cards: too few"):
        settle(boundless("TS 7D", "2S 3H", [{"type": "main", "stake": "1.00", "actions": "hit"}]))


def test_rules_7_grouped_equals_naive():
    from tables.engine import settle_naive
    rec = boundless("9S 8D", "8C 8H 3D TS 2C 9H", [
        {"type": "main", "stake": s, "actions": a, "insurance": False}
        for s in ("0.25", "10.00", "12.35") for a in ("split double hit stand", "split stand stand",
                                                     "hit stand", "", "surrender")])
    g, n = settle(rec), settle_naive(rec)
    assert {k: (b.staked, b.returned) for k, b in g.bets.items()} == \
        {k: (b.staked, b.returned) for k, b in n.bets.items()}
    assert len(g.paths) == 5 and len(n.paths) == 15


# ----------------------------------------------------------------------------- RULES 8

def _dealer(up):
    """A legal dealer hand starting with ``up`` (S17)."""
    from tables.engine import score
    cards = [up, "TD"]
    while score(cards) < 17:
        cards.append("TC")
    return " ".join(cards)


def _side(bet_type, player, dealer, variant="boundless", shoe_round=12):
    if variant == "boundless":
        rec = boundless(dealer, player, [{"type": bet_type, "stake": "1.00"}], shoe_round=shoe_round)
    else:
        rec = seated(variant, dealer, {1: (player, "stand")},
                     [main(1), {"type": bet_type, "seat": 1, "stake": "1.00"}], shoe_round=shoe_round)
    r = settle(rec)
    b = [b for b in r.bets.values() if b.type == bet_type][0]
    return b.pattern, b.returned


@pytest.mark.parametrize("player,expected", [("7S 7H", ("pair", D("12"))), ("KS KH", ("pair", D("12"))),
                                             ("KS QS", (None, D("0")))])
def test_rules_8_classic_pair_same_rank_11_to_1(player, expected):
    assert _side("pair", player, "TS 9D", "classic") == expected


@pytest.mark.parametrize("player,dealer,expected", [
    ("9C 9D", "TS 8D", ("mixed_pair", D("6"))),
    ("9H 9D", "TS 8D", ("coloured_pair", D("11"))),
    ("9H 9H", "TS 8D", ("perfect_pair", D("31"))),
    ("9H 9H", "9H 8D", ("suited_trips", D("51"))),
    ("9H 9H", "9S 8D", ("perfect_pair", D("31"))),
    ("KH QH", "TS 8D", (None, D("0"))),
])
def test_rules_8_premium_pairs(player, dealer, expected):
    assert _side("pairs", player, dealer, "premium") == expected


def test_rules_8_boundless_pairs_no_suited_trips():
    assert _side("pairs", "9H 9H", "9H 8D") == ("perfect_pair", D("31"))


@pytest.mark.parametrize("dealer,expected", [
    ("TS 6D 8C", ("bust_3_cards", D("2"))), ("2S 4D TC 8H", ("bust_4_cards", D("3"))),
    ("2S 2D 2C 8H TS", ("bust_5_cards", D("10"))), ("2S 2D 2C 2H 6S TS", ("bust_6_cards", D("51"))),
    ("2S 2D 2C 2H 2S 2D 3C TS", ("bust_8_plus_cards", D("251"))),
    ("2S 2D 2C 2H 3S 3D TS", ("bust_7_cards", D("101"))),
    ("TS 7D", (None, D("0"))),
])
def test_rules_8_bust_bonus_by_dealer_card_count(dealer, expected):
    assert _side("bust_bonus", "TH 9C", dealer) == expected


@pytest.mark.parametrize("player,up,expected", [
    ("TH 9C", "KS", (None, D("0"))), ("TH 5C", "4S", ("total_19_or_20", D("3"))),
    ("TH 9C", "AS", ("total_19_or_20", D("3"))), ("TH 6C", "5S", ("total_21", D("4"))),
    ("TH 6H", "5H", ("suited_21", D("11"))), ("6H 7C", "8S", ("six_seven_eight", D("31"))),
    ("7H 7C", "7S", ("seven_seven_seven", D("51"))), ("6H 7H", "8H", ("suited_six_seven_eight", D("101"))),
    ("7H 7H", "7H", ("suited_seven_seven_seven", D("201"))), ("AH KC", "TS", ("total_21", D("4"))),
])
def test_rules_8_lucky_trio(player, up, expected):
    assert _side("lucky_trio", player, _dealer(up)) == expected


@pytest.mark.parametrize("player,up,expected", [
    ("2H 9H", "KH", ("flush", D("6"))), ("AH 2C", "3S", ("straight", D("11"))),
    ("QH KC", "AS", ("straight", D("11"))), ("KH AC", "2S", (None, D("0"))),
    ("9H 9C", "9S", ("three_of_a_kind", D("31"))), ("9H TH", "JH", ("straight_flush", D("41"))),
    ("9H 9H", "9H", ("suited_trips", D("101"))), ("2H 5C", "9S", (None, D("0"))),
])
def test_rules_8_poker_trio(player, up, expected):
    assert _side("poker_trio", player, _dealer(up)) == expected


@pytest.mark.parametrize("bet_type,last", [("pairs", 40), ("bust_bonus", 45), ("lucky_trio", 45),
                                           ("poker_trio", 45)])
def test_rules_8_side_bet_shoe_round_limits(bet_type, last):
    _side(bet_type, "TH 9C", "TS 7D", shoe_round=last)
    with pytest.raises(InvalidRecord, match=r"^bets\[0\]\.type"):
        _side(bet_type, "TH 9C", "TS 7D", shoe_round=last + 1)


def test_rules_8_insurance_pays_2_to_1():
    rec = seated("premium", "AS KD", {1: ("TS 9H", "")}, [main(1, insurance=True)])
    b = settle(rec).bets["b1"]
    assert (b.insurance.stake, b.insurance.returned, b.extras) == (D("5"), D("15"), {"insurance": D("5")})


def test_rules_8_pay_tables_are_data_and_overridable():
    r = ruleset("premium", pay_tables={"pairs": {"mixed_pair": 6}, "main": {"blackjack": "1.2"}})
    assert r.pay_tables["pairs"]["mixed_pair"] == 6 and r.pay_tables["pairs"]["perfect_pair"] == 30
    rec = seated("premium", "TS 8D", {1: ("9C 9D", "stand"), 2: ("AS KD", "")},
                 [main(1), main(2), {"type": "pairs", "seat": 1, "stake": "1.00"}])
    a = amounts(rec, rules=r)
    assert a["b3"] == (D("1"), D("7")) and a["b2"] == (D("10"), D("22"))
    for bad in ({"pairs": {"nope": 5}}, {"pairs": {"mixed_pair": 0}}, {"pairs": {"mixed_pair": 1.5}},
                {"bust_bonus": {"bust_3_cards": 1}}, [1], "pairs", {"pairs": [6]}):
        with pytest.raises(ValueError):
            ruleset("premium", pay_tables=bad)
    assert set(DEFAULT_PAY_TABLES["pairs"]) == {"mixed_pair", "coloured_pair", "perfect_pair", "suited_trips"}


def test_rules_8_only_highest_pattern_paid_with_overrides():
    r = ruleset("boundless", pay_tables={"lucky_trio": {"total_21": 500}})
    rec = boundless("8S 7D 5C", "6H 7C", [{"type": "lucky_trio", "stake": "1.00"}])
    assert settle(rec, rules=r).bets["b1"].pattern == "total_21"
    assert settle(rec).bets["b1"].pattern == "six_seven_eight"


def test_rulesets_are_data():
    assert (CL.seats, CL.seats_per_player, PR.seats_per_player, BL.seats) == (7, 1, 2, None)
    assert not CL.peek and PR.peek and BL.peek and CL.late_bj_returns_extras
    assert BL.last_shoe_round["pairs"] == 40 and BL.last_shoe_round["poker_trio"] == 45
    assert CL.bet_behind and PR.bet_behind and not BL.bet_behind
    assert CL.bet_types == {"main", "behind", "pair"}
    assert BL.bet_types == {"main", "pairs", "bust_bonus", "lucky_trio", "poker_trio"}
    with pytest.raises(ValueError):
        ruleset("nope")
