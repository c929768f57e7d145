"""The chain of round records (settlement.seals): each final step of a round is sealed once, in its
table's chain; what a seal covers (the record, corrections, timeline, bets) edited behind the
platform's back is found and the seal named; a lost seal task is made good by the beat."""

import json
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest
from django.db import connection
from django_celery_beat.models import PeriodicTask

from accounts.chain import link
from settlement import seals
from settlement.models import RoundSeal, SealChain
from settlement.services import resettle_round, settle_round
from settlement.voids import void_round
from tables.engine import RULES_VERSION
from tests.settlement.helpers import played_round, record_for
from tests.tamper import behind_the_platforms_back

pytestmark = pytest.mark.django_db


def settled(table=None):
    round_, players = played_round(table)
    settle_round(round_id=round_.pk)
    return seals.seal(round_id=round_.pk).round, players


def test_a_settled_round_is_sealed_with_what_it_was_and_the_hashes_of_what_it_is_made_of():
    round_, _ = settled()
    sealed = RoundSeal.objects.get(round=round_)
    content = sealed.content
    assert (sealed.sequence, sealed.state, sealed.correction, sealed.prev_hash) == (1, "settled", 0, None)
    assert content["rules_version"] == RULES_VERSION == round_.rules_version
    assert content["variant"] == "boundless" and content["pay_tables"]["main"] == {"blackjack": "1.5", "win": "1"}
    assert content["record"] == seals.sha256(round_.record) and content["corrections"] == []
    assert content["times"]["settled_at"] and content["void"] is None
    assert content["timeline"]["events"] == round_.events.count()
    assert content["bets"] == {"count": 6, "staked": "61.0000", "returned": "65.0000",
                               "sha256": seals.bets_of(round_.pk)["sha256"]}
    assert bytes(sealed.chain_hash) == link(None, seals.canonical(content))
    assert bytes(SealChain.objects.get(table=round_.table).head) == bytes(sealed.chain_hash)
    assert seals.seal(round_id=round_.pk) == sealed  # once per step


def test_each_final_step_is_a_link_of_the_tables_chain():
    round_, _ = settled()
    other, _ = settled(round_.table)
    resettle_round(round_id=round_.pk, corrected_record=record_for(round_, dealer=["7D", "9C", "5H"]),
                   reason="misread 9C as TC", actor="operator:pit")
    seals.seal(round_id=round_.pk)
    void_round(round_id=round_.pk, reason="studio fault", actor="operator:pit")
    seals.seal(round_id=round_.pk)
    chain = list(RoundSeal.objects.filter(table=round_.table).order_by("sequence"))
    assert [(s.round_id, s.state, s.correction) for s in chain] == [
        (round_.pk, "settled", 0), (other.pk, "settled", 0), (round_.pk, "settled", 1), (round_.pk, "voided", 1)]
    assert all(bytes(s.prev_hash) == bytes(before.chain_hash) for before, s in zip(chain, chain[1:]))
    assert chain[2].content["corrections"][0]["reason"] == "misread 9C as TC"
    assert chain[3].content["void"]["reason"] == "studio fault" and chain[3].content["void"]["actor"] == "operator:pit"
    result = seals.verify()
    assert result.broken is None and result.links == 4 and result.chains == 1 and result.unsealed == []


def test_settling_resettling_and_voiding_queue_the_seal(django_capture_on_commit_callbacks, settings):
    round_, _ = played_round()
    with django_capture_on_commit_callbacks() as callbacks:
        settle_round(round_id=round_.pk)
    assert len(callbacks) == 1  # seal_round queued for once the settlement commits
    assert seals.unsealed_round_ids() == [round_.pk]
    seals.seal_round.apply(args=[round_.pk])  # what the worker runs
    assert seals.unsealed_round_ids() == []
    with django_capture_on_commit_callbacks() as callbacks:
        void_round(round_id=round_.pk, reason="studio fault", actor="system")
    assert len(callbacks) == 1 and seals.unsealed_round_ids() == [round_.pk]
    assert PeriodicTask.objects.filter(task="settlement.seal_unsealed", enabled=True).exists()


def test_the_beat_seals_recent_rounds_whose_seal_task_was_lost():
    round_, _ = played_round()
    settle_round(round_id=round_.pk)
    assert seals.verify().unsealed == [round_.pk]
    assert seals.seal_unsealed() == [round_.pk]
    assert seals.verify().unsealed == [] and seals.seal_unsealed() == []


@pytest.fixture
def chain_of_three():
    rounds = []
    round_, _ = settled()
    rounds.append(round_)
    for _ in range(2):
        rounds.append(settled(round_.table)[0])
    return rounds


@pytest.mark.parametrize("table, sql, why", [
    ("tables_round", "UPDATE tables_round SET record = %s WHERE id = %s", "its record differs"),
    ("tables_roundevent", "UPDATE tables_roundevent SET actor = 'nobody' WHERE id = "
                          "(SELECT min(id) FROM tables_roundevent WHERE round_id = %s)", "its timeline differs"),
    ("tables_roundevent", "DELETE FROM tables_roundevent WHERE id = "
                          "(SELECT max(id) FROM tables_roundevent WHERE round_id = %s AND kind = 'bet_placed')",
     "its timeline differs"),
    ("wagering_bet", "UPDATE wagering_bet SET returned = 1000 WHERE round_id = %s AND record_id = 'stand'",
     "its bets differ"),
    ("settlement_roundseal", "UPDATE settlement_roundseal SET content = jsonb_set(content, '{external_id}', "
                             "'\"R-forged\"') WHERE round_id = %s", "content does not match"),
])
def test_a_round_edited_behind_the_platforms_back_is_found_at_its_seal(chain_of_three, table, sql, why):
    middle = chain_of_three[1]
    if connection.vendor != "postgresql":  # SQLite keeps JSON as text
        sql = sql.replace("jsonb_set(content, '{external_id}', '\"R-forged\"')",
                          "json_set(content, '$.external_id', 'R-forged')")
    else:
        sql = sql.replace("SET record = %s", "SET record = %s::jsonb")
    params = [json.dumps(dict(middle.record, dealer=["7D", "9C", "5H"])), middle.pk] if table == "tables_round" \
        else [middle.pk]
    behind_the_platforms_back(table, sql, params)
    broken = seals.verify().broken
    assert broken is not None and broken.link == RoundSeal.objects.get(round=middle).pk, broken
    assert why in broken.why and middle.table.code in str(broken)


def test_a_removed_seal_is_found_at_the_next_one_and_a_removed_last_seal_at_the_head(chain_of_three):
    first, middle, last = chain_of_three
    behind_the_platforms_back("settlement_roundseal", "DELETE FROM settlement_roundseal WHERE round_id = %s",
                              [middle.pk])
    broken = seals.verify().broken
    assert broken.link == RoundSeal.objects.get(round=last).pk and "previous link" in broken.why
    behind_the_platforms_back("settlement_roundseal", "DELETE FROM settlement_roundseal WHERE round_id = %s",
                              [last.pk])
    broken = seals.verify().broken
    assert broken.link is None and "chain head" in str(broken)


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_two_seals_of_one_round_at_once_write_one():
    round_, _ = played_round()
    settle_round(round_id=round_.pk)

    def run(_):
        try:
            return seals.seal(round_id=round_.pk).pk
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=4) as pool:
        ids = set(pool.map(run, range(4)))
    assert len(ids) == 1 and RoundSeal.objects.count() == 1 and seals.verify().broken is None
    assert Decimal(RoundSeal.objects.get().content["bets"]["returned"]) == Decimal("65.00")
