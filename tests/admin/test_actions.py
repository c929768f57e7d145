"""Operator actions: each role can do exactly its actions; each action moves money only through
the services, is audited, and is idempotent on double submit."""

import html
import json
from decimal import Decimal

import pytest
from django.test import override_settings
from django.urls import reverse

from accounts.models import Account, LedgerTransaction
from adminkit.roles import DISPUTE_OFFICER, SUPERVISOR, VIEWER
from settlement.disputes import assign_dispute, open_dispute
from settlement.models import Dispute, OperatorAction, RoundCorrection
from tables.models import Round
from tests.factories import make_operator, otp_login


def _client(client, user):
    return otp_login(client, user)


def _wallet(player):
    return Account.objects.get(kind="wallet", player=player)


def _urls(round_, dispute, wallet):
    return {"void": reverse("admin:tables_round_void", args=[round_.pk]),
            "resettle": reverse("admin:tables_round_resettle", args=[round_.pk]),
            "resolve": reverse("admin:settlement_dispute_resolve", args=[dispute.pk]),
            "adjust": reverse("admin:accounts_account_adjust", args=[wallet.pk])}


@pytest.mark.parametrize("role, allowed", [
    (VIEWER, set()),
    (DISPUTE_OFFICER, {"resolve", "adjust"}),
    (SUPERVISOR, {"void", "resettle", "resolve", "adjust"}),
])
def test_each_role_can_do_exactly_its_actions(client, settled_round, role, allowed):
    round_, bets = settled_round
    dispute = open_dispute(player=bets[1].player, bets=[bets[1]], reason="I should have won")
    urls = _urls(round_, dispute, _wallet(bets[1].player))
    c = _client(client, make_operator(role))
    assert c.get(reverse("admin:wagering_bet_changelist")).status_code == 200
    for action, url in urls.items():
        assert c.get(url).status_code == (200 if action in allowed else 403), (role, action)


def test_viewer_cannot_void(client, settled_round, viewer):
    round_, bets = settled_round
    balances = [_wallet(b.player).balance for b in bets]
    response = _client(client, viewer).post(reverse("admin:tables_round_void", args=[round_.pk]), {"reason": "x"})
    assert response.status_code == 403
    round_.refresh_from_db()
    assert round_.state == Round.State.SETTLED and not OperatorAction.objects.exists()
    assert [_wallet(b.player).balance for b in bets] == balances


def test_void_refunds_through_settlement_audited_once(client, settled_round, supervisor):
    round_, bets = settled_round
    c = _client(client, supervisor)
    url = reverse("admin:tables_round_void", args=[round_.pk])
    assert c.post(url, {"reason": ""}).status_code == 200  # a reason is required: form shown again
    for _ in range(2):
        assert c.post(url, {"reason": "studio camera failure"}).status_code == 302
    round_.refresh_from_db()
    assert round_.state == Round.State.VOIDED
    assert [_wallet(b.player).balance for b in bets] == [Decimal("100.00")] * 3
    actions = list(OperatorAction.objects.filter(target_model="tables.round", target_pk=str(round_.pk)))
    assert len(actions) == 1 and actions[0].actor == supervisor and actions[0].reason == "studio camera failure"
    assert LedgerTransaction.objects.filter(key__startswith="reverse:").count() == 1  # the one winning bet
    page = c.get(reverse("admin:tables_round_change", args=[round_.pk])).content.decode()
    assert "studio camera failure" in page and "operator:supervisor" in page


def test_resettle_previews_the_card_diff_then_settles_once(client, settled_round, supervisor):
    round_, bets = settled_round
    corrected = dict(round_.record, player_cards=["8C", "8H", "2D"])  # the hitter's card was a 2, not a 3
    c = _client(client, supervisor)
    url = reverse("admin:tables_round_resettle", args=[round_.pk])
    form = {"record": json.dumps(corrected), "reason": "rescan showed 2♦", "after_sequence": "0"}
    preview = c.post(url, {**form, "preview": "1"}).content.decode()
    assert "Step 2 of 2" in preview and "changed" in preview and "3♦" in preview and "2♦" in preview
    assert not RoundCorrection.objects.exists()  # nothing settled by the preview
    for _ in range(2):
        assert c.post(url, {**form, "confirm": "1"}).status_code == 302
    assert RoundCorrection.objects.filter(round=round_).count() == 1
    assert OperatorAction.objects.filter(action="resettle_round").count() == 1
    bets[0].refresh_from_db()
    assert bets[0].outcome == "win" and bets[0].returned == Decimal("20.00")  # 18 beats 17
    assert not LedgerTransaction.objects.filter(key__startswith="resettle:").exists()  # same return, no money


def test_resettle_rejects_an_invalid_record(client, settled_round, supervisor):
    round_, _ = settled_round
    bad = dict(round_.record, player_cards=["8C", "8H"])  # too few cards for the hit
    page = _client(client, supervisor).post(reverse("admin:tables_round_resettle", args=[round_.pk]),
                                            {"record": json.dumps(bad), "reason": "r", "preview": "1"})
    assert "Step 2 of 2" not in page.content.decode() and "errorlist" in page.content.decode()


def test_resettle_refuses_a_record_nested_too_deeply(client, settled_round, supervisor):
    round_, _ = settled_round
    page = _client(client, supervisor).post(reverse("admin:tables_round_resettle", args=[round_.pk]),
                                            {"record": "[" * 50_000 + "]" * 50_000, "reason": "r", "preview": "1"})
    assert page.status_code == 200 and "nested too deeply" in page.content.decode()


@pytest.mark.parametrize("record, sentence", [
    ('{"round": ' + "9" * 5_000 + "}", "not JSON: an integer of 5000 digits is out of range"),
    ('{"round": "a\\u0000b"}', "not a round record: round: must not contain NUL characters"),
    ('{"round": NaN}', "not JSON: NaN is not valid JSON"),
    ('{"round": "R", "round": "S"}', "appears twice in one object"),
])
def test_resettle_refuses_json_the_apis_refuse_with_a_form_error(client, settled_round, supervisor, record, sentence):
    round_, _ = settled_round
    page = _client(client, supervisor).post(reverse("admin:tables_round_resettle", args=[round_.pk]),
                                            {"record": record, "reason": "r", "preview": "1"})
    assert page.status_code == 200 and sentence in html.unescape(page.content.decode())
    assert not RoundCorrection.objects.filter(round=round_).exists()


def test_resolve_dispute_with_adjustment_is_idempotent(client, settled_round, officer):
    round_, bets = settled_round
    dispute = open_dispute(player=bets[1].player, bets=[bets[1]], reason="the dealer misread")
    assign_dispute(dispute=dispute, assignee=officer, actor=officer)
    c = _client(client, officer)
    url = reverse("admin:settlement_dispute_resolve", args=[dispute.pk])
    for _ in range(2):
        assert c.post(url, {"decision": "upheld", "adjustment": "10.00", "confirm": "1",
                            "reason": "video shows a push"}).status_code == 302
    dispute.refresh_from_db()
    assert dispute.status == Dispute.Status.UPHELD and dispute.adjustment == Decimal("10.00")
    assert _wallet(bets[1].player).balance == Decimal("100.00")
    assert LedgerTransaction.objects.filter(key=dispute.adjustment_key).count() == 1
    assert OperatorAction.objects.filter(action="resolve_dispute").count() == 1


@override_settings(DISPUTE_OFFICER_ADJUSTMENT_LIMIT=Decimal("50.00"))
def test_adjustment_limit_by_role(client, settled_round, officer, supervisor):
    round_, bets = settled_round
    wallet = _wallet(bets[2].player)
    url = reverse("admin:accounts_account_adjust", args=[wallet.pk])
    over = {"amount": "60.00", "reason": "goodwill", "key": "k-over"}
    page = _client(client, officer).post(url, over)
    assert page.status_code == 200 and "need a supervisor" in page.content.decode()
    assert _wallet(bets[2].player).balance == Decimal("90.00")
    dispute = open_dispute(player=bets[2].player, bets=[bets[2]], reason="credited twice")
    for _ in range(2):  # a double submit carries the same form key
        assert client.post(url, {"amount": "-5.00", "reason": "duplicate credit", "key": "k-small",
                                 "dispute": dispute.pk}).status_code == 302
    assert _wallet(bets[2].player).balance == Decimal("85.00")
    assert OperatorAction.objects.filter(action="manual_adjustment").count() == 1
    assert _client(client, supervisor).post(url, over).status_code == 302
    assert _wallet(bets[2].player).balance == Decimal("145.00")
    page = client.post(url, {**over, "key": "k" * 65})  # a key longer than the ledger's keys take: refused
    assert page.status_code == 200 and "at most 64 characters" in page.content.decode()
    assert _wallet(bets[2].player).balance == Decimal("145.00")
    page = client.get(reverse("admin:accounts_account_change", args=[wallet.pk])).content.decode()
    assert "goodwill" in page and "operator:supervisor" in page
