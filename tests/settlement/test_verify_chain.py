"""``manage.py verify_chain``: the ledger's and the round records' chains proved intact after real
play, and a ledger transaction or a round's event edited behind the platform's back (raw SQL, the
immutability trigger disabled) named as the first broken row, exit status non-zero."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import LedgerTransaction
from settlement import seals
from settlement.services import settle_round
from settlement.voids import void_round
from tests.settlement.helpers import played_round
from tests.tamper import behind_the_platforms_back

pytestmark = pytest.mark.django_db


@pytest.fixture
def played():
    rounds = []
    for _ in range(2):
        round_, _ = played_round()
        settle_round(round_id=round_.pk)
        seals.seal(round_id=round_.pk)
        rounds.append(round_)
    void_round(round_id=rounds[1].pk, reason="studio fault", actor="system")
    seals.seal(round_id=rounds[1].pk)
    return rounds


def test_intact_chains_are_proved(played, capsys):
    call_command("verify_chain")
    out = capsys.readouterr().out
    transactions = LedgerTransaction.objects.count()
    assert f"ledger: {transactions:,} transactions in" in out and "round records: 3 seals in 2 chains: intact" in out


def test_a_ledger_transaction_edited_behind_the_platforms_back_is_named(played, capsys):
    payout = LedgerTransaction.objects.filter(key__startswith="payout:").order_by("pk").first()
    behind_the_platforms_back("accounts_ledgertransaction", "UPDATE accounts_ledgertransaction SET kind = 'refund' "
                                                            "WHERE id = %s", [payout.pk])
    with pytest.raises(CommandError, match=f"ledger at ledger transaction {payout.pk} "):
        call_command("verify_chain")
    assert f"ledger: BROKEN at ledger transaction {payout.pk}" in capsys.readouterr().err
    call_command("verify_chain", chain="records")  # the other chains still hold


def test_an_event_edited_behind_the_platforms_back_is_named_at_its_rounds_seal(played):
    first = played[0]
    behind_the_platforms_back("tables_roundevent", "UPDATE tables_roundevent SET actor = 'someone else' WHERE id = "
                                                   "(SELECT min(id) FROM tables_roundevent WHERE round_id = %s)",
                              [first.pk])
    seal = first.seals.get()
    with pytest.raises(CommandError, match=f"round records at round seal {seal.pk} .*its timeline differs"):
        call_command("verify_chain")


def test_rounds_waiting_for_their_seal_are_listed_not_broken(capsys):
    round_, _ = played_round()
    settle_round(round_id=round_.pk)
    call_command("verify_chain")
    assert f"1 rounds waiting for their seal (not a break: sealed by the beat, or settled before the chains " \
           f"existed): {round_.pk}" in capsys.readouterr().out
