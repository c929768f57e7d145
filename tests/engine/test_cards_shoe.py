"""RULES 1 (cards and shoe) and RULES 2 (hand score)."""
import random
from collections import Counter

import pytest

from tables.engine import Shoe, card_colour, card_value, is_blackjack, is_soft, parse_card, rank_order, score
from tables.engine.cards import ALL_CARDS


def test_rules_1_card_codes_and_ten_alias():
    assert parse_card("AS") == "AS"
    assert parse_card("10D") == "TD"
    assert parse_card("QH") == "QH"
    for bad in ("1S", "AX", "as", "T", "", "10", "11S", None, 10, "ASS"):
        with pytest.raises(ValueError):
            parse_card(bad)


def test_rules_1_values_colours_rank_order():
    assert [card_value(c + "S") for c in "A23456789TJQK"] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10]
    assert card_colour("AH") == card_colour("2D") == "red"
    assert card_colour("AS") == card_colour("2C") == "black"
    assert [rank_order(c + "S") for c in "A23456789TJQK"] == list(range(1, 14))
    assert len(ALL_CARDS) == 52 and len(set(ALL_CARDS)) == 52


@pytest.mark.parametrize("cards,expected,soft", [
    ("AS 9D", 20, True), ("AS 9D 5C", 15, False), ("AS AD", 12, True), ("AS AD 9C", 21, True),
    ("KS QD", 20, False), ("KS QD 2C", 22, False), ("AS 6D", 17, True), ("AS 6D TC", 17, False),
])
def test_rules_2_score_examples(cards, expected, soft):
    assert score(cards.split()) == expected
    assert is_soft(cards.split()) == soft


def test_rules_2_blackjack_only_two_initial_cards_never_split():
    assert is_blackjack(["AS", "KD"])
    assert is_blackjack(["TD", "AH"])
    assert not is_blackjack(["AS", "KD"], split=True)
    assert not is_blackjack(["AS", "5D", "5C"])
    assert not is_blackjack(["AS", "9D"])


def _all_cards(shoe):
    return shoe.burned + [shoe.draw() for _ in range(shoe.remaining)]


def test_rules_1_shoe_416_cards_each_8_times():
    shoe = Shoe(rng=random.Random(1), penetration=0.75)
    assert shoe.size == 416
    cards = _all_cards(shoe)
    assert len(cards) == 416
    assert set(Counter(cards).values()) == {8}
    assert len(Counter(cards)) == 52


@pytest.mark.parametrize("seed", range(20))
def test_rules_1_burn_count_is_value_of_first_card(seed):
    shoe = Shoe(rng=random.Random(seed))
    assert len(shoe.burned) == 1 + card_value(shoe.shown)
    assert shoe.burned[0] == shoe.shown
    assert shoe.dealt == len(shoe.burned)


def test_rules_1_shuffle_is_injected_and_deterministic():
    a = Shoe(rng=random.Random(5))
    b = Shoe(rng=random.Random(5))
    assert [a.draw() for _ in range(50)] == [b.draw() for _ in range(50)]
    assert Shoe().remaining > 0  # default secrets.SystemRandom()


def test_rules_1_cut_card_last_round_then_reshuffle():
    shoe = Shoe(rng=random.Random(2), penetration=0.5)
    assert shoe.begin_round() == 1
    rounds = 1
    while True:
        for _ in range(20):
            shoe.draw()
        if shoe.cut_card_out:
            break
        assert shoe.end_round() is False
        rounds += 1
        assert shoe.begin_round() == rounds
    assert shoe.dealt >= shoe.cut_position == 208
    assert shoe.end_round() is True  # the cut-card round was the last: reshuffled
    assert shoe.shuffles == 2 and not shoe.cut_card_out
    assert shoe.begin_round() == 1
    assert shoe.remaining == 416 - len(shoe.burned)


def test_rules_1_penetration_must_be_a_fraction():
    with pytest.raises(ValueError):
        Shoe(penetration=1.5)
