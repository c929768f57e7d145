"""Issue 20, card integrity (RULES 1, 10): the record must hold the cards the game server reported
as scanned during the round, destination by destination in scan order, and over a shoe no card
comes out more than 8 times nor more than 416 cards in all (burnt cards included)."""

import copy

import pytest

from settlement.results import record_result
from settlement.services import resettle_round, settle_round
from tables.cards import scan_events
from tables.exceptions import InvalidInput, InvalidRecord
from tables.models import Round, Shoe
from tables.services import report_play
from tests.factories import BoundlessTableFactory, ClassicTableFactory, PlayerFactory, RoundFactory, scan
from tests.wagering.helpers import sit
from wagering.closing import close_betting
from wagering.placement import place_bet

pytestmark = pytest.mark.django_db


def _round_with_a_bet(table, external_id="R-1", shoe=1):
    round_ = RoundFactory(table=table, external_id=external_id, shoe=shoe)
    player = PlayerFactory(funded="100.00")
    place_bet(round_id=round_.pk, key=f"{external_id}-b", player=player.code, type="main", stake="10.00")
    close_betting(round_id=round_.pk)
    return round_, player


def _record(round_, player, dealer=("7D", "TC"), player_cards=("TH", "6C", "5S")):
    return {"format": "round-record/1", "variant": "boundless", "round": round_.external_id,
            "shoe_round": round_.shoe_round, "currency": "EUR", "dealer": list(dealer),
            "player_cards": list(player_cards),
            "bets": [{"id": f"{round_.external_id}-b", "player": player.game_code, "type": "main", "stake": "10.00",
                      "actions": ["hit"]}]}


def test_a_record_of_cards_never_scanned_is_refused(eur):
    """The attack of issue 20: the game server chose the cards. Without scans, or with other
    cards or another order than scanned, the record is invalid and nothing is settled."""
    round_, player = _round_with_a_bet(BoundlessTableFactory())
    record = _record(round_, player)
    with pytest.raises(InvalidRecord, match="no card|were none") as error:
        record_result(round_id=round_.pk, record=record)
    assert error.value.extra["field"] == "dealer"
    scan(round_.pk, record)
    swapped = copy.deepcopy(record)
    swapped["player_cards"] = ["6C", "TH", "5S"]  # the same cards, another order
    with pytest.raises(InvalidRecord) as error:
        record_result(round_id=round_.pk, record=swapped)
    assert error.value.extra["field"] == "player_cards"
    assert Round.objects.get(pk=round_.pk).state == Round.State.CLOSED
    record_result(round_id=round_.pk, record=record)
    assert Round.objects.get(pk=round_.pk).state in (Round.State.RESULTED, Round.State.SETTLED)


def test_a_rescan_replaces_the_misread_card(eur):
    round_, player = _round_with_a_bet(BoundlessTableFactory())
    record = _record(round_, player)
    events = scan_events(record)
    events[1] = {**events[1], "card": "TS"}  # misread
    report_play(round_id=round_.pk, events=events[:2] + [{"kind": "card_rescanned", "to": "player"},  # unreadable
                                                         {"kind": "card_rescanned", "to": "player", "card": "TH"}]
                + events[2:])
    record_result(round_id=round_.pk, record=record)


def test_scans_name_a_card_and_a_destination_of_the_table(eur):
    round_, _ = _round_with_a_bet(BoundlessTableFactory())
    for bad in ({"card": "AS"}, {"card": "AS", "to": "seat:1"}, {"card": "1S", "to": "dealer"},
                {"to": "dealer"}):
        with pytest.raises(InvalidInput):
            report_play(round_id=round_.pk, events=[{"kind": "card_scanned", **bad}])


def test_cards_go_only_to_the_seats_holding_a_seat_bet(eur):
    """The seventh fresh attack: a card scanned to a seat with no seat bet this round was taken,
    and then no record could be valid (the seat's cards must be in it, and a seat without a main
    bet must not): the round could only be cancelled."""
    table = ClassicTableFactory()
    round_ = RoundFactory(table=table)
    anna, cleo = PlayerFactory(funded="100.00"), PlayerFactory(funded="100.00")
    sit(table, 3, anna)
    sit(table, 7, cleo)  # seated, no bet this round
    place_bet(round_id=round_.pk, key="a", player=anna.code, type="main", stake="10.00", seat=3)
    close_betting(round_id=round_.pk)
    with pytest.raises(InvalidInput, match=r"events\[1\].to: seat 7 holds no seat bet this round \(seats dealt to: 3"):
        report_play(round_id=round_.pk, events=[{"kind": "card_scanned", "card": "TC", "to": "seat:3"},
                                                {"kind": "card_scanned", "card": "TD", "to": "seat:7"}])
    assert not round_.events.filter(kind__in=["card_scanned", "card_rescanned"]).exists()  # all or nothing
    report_play(round_id=round_.pk, events=[{"kind": "card_scanned", "card": "TC", "to": "seat:3"}])


def test_no_card_more_than_8_times_in_a_shoe(eur):
    table = BoundlessTableFactory()
    for n in range(5):  # two 7Ds a round: the fifth round's makes 9 (+ 1 in this record's dealer)
        round_, player = _round_with_a_bet(table, external_id=f"R-{n}")
        record = _record(round_, player, dealer=("7D", "TC"), player_cards=("7D", "6C", "5S")) if n < 4 else \
            _record(round_, player, dealer=("7D", "TC"), player_cards=("TH", "6C", "5S"))
        scan(round_.pk, record)
        if n < 4:
            record_result(round_id=round_.pk, record=record)
    with pytest.raises(InvalidRecord, match="7D came out 9 times.*until that round is corrected") as error:
        record_result(round_id=round_.pk, record=record)
    assert error.value.extra["field"] == "shoe"


def test_no_more_than_416_cards_from_a_shoe_burn_included(eur):
    table = BoundlessTableFactory()
    round_, player = _round_with_a_bet(table)
    Shoe.objects.filter(pk=round_.shoe_id).update(burn_count=412)
    record = _record(round_, player)
    scan(round_.pk, record)
    with pytest.raises(InvalidRecord, match="417 cards dealt and burnt"):
        record_result(round_id=round_.pk, record=record)


def test_a_corrected_misread_counts_in_its_shoe_with_the_cards_really_dealt(eur):
    """A 7H misread as 7D (scanned and recorded so) makes the shoe's eight real 7Ds nine: the
    record holding the eighth is refused until the misread round is corrected (resettled with the
    7H), then taken: the shoe counts a corrected round by its correction."""
    table = BoundlessTableFactory()
    first, player = _round_with_a_bet(table, external_id="R-0")
    dealt = _record(first, player, dealer=("7H", "TC"))
    misread = _record(first, player, dealer=("7D", "TC"))
    scan(first.pk, misread)
    record_result(round_id=first.pk, record=misread)
    settle_round(round_id=first.pk)
    for n in range(1, 5):  # two real 7Ds a round: eight in all
        round_, player = _round_with_a_bet(table, external_id=f"R-{n}")
        record = _record(round_, player, dealer=("7D", "TC"), player_cards=("7D", "6C", "5S"))
        scan(round_.pk, record)
        if n < 4:
            record_result(round_id=round_.pk, record=record)
            settle_round(round_id=round_.pk)
    with pytest.raises(InvalidRecord, match="7D came out 9 times.*until that round is corrected"):
        record_result(round_id=round_.pk, record=record)
    resettle_round(round_id=first.pk, corrected_record=dealt, reason="video review: the dealer's 7H read as 7D",
                   actor="test")
    record_result(round_id=round_.pk, record=record)
    assert Round.objects.get(pk=round_.pk).state in (Round.State.RESULTED, Round.State.SETTLED)
