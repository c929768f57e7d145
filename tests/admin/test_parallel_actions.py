"""Operator actions clicked in parallel (8 staff requests at once, each in a thread of its own on
PostgreSQL): the change happens once, and each answer's message says what happened to it: one
says it did it, the others that it was done already, from what the service reports under its lock."""

import threading
from decimal import Decimal

import pytest
from django.contrib.messages import get_messages
from django.db import connection
from django.test import Client
from django.urls import reverse

from accounts.models import LedgerTransaction
from adminkit.roles import DISPUTE_OFFICER, SUPERVISOR
from settlement.disputes import manual_adjustment, open_dispute
from settlement.models import Adjustment, Dispute, OperatorAction
from tables.models import Round
from tests.factories import make_operator, otp_login

pytestmark = [pytest.mark.postgresql, pytest.mark.django_db(transaction=True)]

CLICKS = 8


def clicked_at_once(user, url, data):
    """The messages of ``CLICKS`` POSTs of ``data`` to ``url`` by ``user``, sent at once (a client
    and a database connection per thread): one list of message texts per answer."""
    clients = [otp_login(Client(), user) for _ in range(CLICKS)]
    start, answers = threading.Barrier(CLICKS), []

    def click(client):
        start.wait()
        try:
            response = client.post(url, data)
            assert response.status_code == 302, response.content[:500]
            answers.append([str(message) for message in get_messages(response.wsgi_request)])
        finally:
            connection.close()

    threads = [threading.Thread(target=click, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(answers) == CLICKS
    return sorted(answers)


def test_parallel_voids_of_a_round_say_voided_once(settled_round):
    round_, _ = settled_round
    answers = clicked_at_once(make_operator(SUPERVISOR), reverse("admin:tables_round_void", args=[round_.pk]),
                              {"reason": "studio camera failure"})
    voided = [f"Round {round_.title} voided: every stake refunded."]
    already = [f"Round {round_.title} was already voided: nothing changed."]
    assert answers.count(voided) == 1 and answers.count(already) == CLICKS - 1, answers
    assert Round.objects.get(pk=round_.pk).state == Round.State.VOIDED
    assert OperatorAction.objects.filter(action__in=["void_round", "reverse_round"]).count() == 1


def test_parallel_approvals_of_an_adjustment_say_posted_once(settled_round, settings):
    settings.ADJUSTMENT_APPROVAL_THRESHOLD = Decimal("50.00")
    _, bets = settled_round
    pending = manual_adjustment(player=bets[1].player, currency="EUR", amount="60.00", reason="goodwill",
                                actor=make_operator(SUPERVISOR), key="big")
    assert pending.status == Adjustment.Status.PENDING
    answers = clicked_at_once(make_operator(SUPERVISOR, username="second"),
                              reverse("admin:settlement_adjustment_changelist"),
                              {"action": "approve", "_selected_action": [str(pending.pk)], "reason": "ticket 7"})
    posted = [f"Adjustment {pending.pk} approved and posted."]
    already = [f"Adjustment {pending.pk} was already approved and posted: nothing changed."]
    assert answers.count(posted) == 1 and answers.count(already) == CLICKS - 1, answers
    assert LedgerTransaction.objects.filter(key=pending.key).count() == 1


def test_parallel_decisions_of_a_dispute_say_decided_once(settled_round):
    _, bets = settled_round
    dispute = open_dispute(player=bets[1].player, bets=[bets[1]], reason="I should have won")
    answers = clicked_at_once(make_operator(DISPUTE_OFFICER), reverse("admin:settlement_dispute_resolve",
                                                                      args=[dispute.pk]),
                              {"decision": "rejected", "reason": "the video shows 17"})
    decided = [f"Dispute {dispute.pk} rejected."]
    already = [f"Dispute {dispute.pk} was already rejected: nothing changed."]
    assert answers.count(decided) == 1 and answers.count(already) == CLICKS - 1, answers
    assert Dispute.objects.get(pk=dispute.pk).status == Dispute.Status.REJECTED
    assert OperatorAction.objects.filter(action="resolve_dispute").count() == 1
