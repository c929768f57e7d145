"""Manual adjustments (settlement.adjustments): a Dispute officer's caps per adjustment, per day and
per player, enforced under locks; an officer's adjustment names its dispute; a supervisor's above
the threshold waits for a second supervisor; amounts by the one strict parser, stored normalised."""

from decimal import Decimal

import pytest
from django.urls import reverse

from accounts.exceptions import IdempotencyConflict, InvalidAmount
from accounts.models import LedgerTransaction
from adminkit.roles import DISPUTE_OFFICER, SUPERVISOR
from settlement import disputes
from settlement.adjustments import approve_adjustment
from settlement.exceptions import AdjustmentLimitExceeded, AdjustmentNeedsDispute, ApprovalRefused
from settlement.models import Adjustment, Dispute, OperatorAction
from tables.exceptions import InvalidInput
from tests.factories import make_operator, otp_login
from tests.wagering.test_concurrency import run_at_once
from wagering.models import Bet

from .helpers import balance, played_round


@pytest.fixture
def limits(settings):
    settings.DISPUTE_OFFICER_ADJUSTMENT_LIMIT = Decimal("100.00")
    settings.DISPUTE_OFFICER_DAILY_LIMIT = Decimal("250.00")
    settings.DISPUTE_OFFICER_PLAYER_DAILY_LIMIT = Decimal("150.00")
    settings.ADJUSTMENT_APPROVAL_THRESHOLD = Decimal("1000.00")
    return settings


def _disputes(n=2):
    """``n`` players of one played round, each with a dispute of their bet."""
    round_, players = played_round()
    chosen = list(players.items())[:n]
    return [(p, disputes.open_dispute(player=p, bets=[Bet.objects.get(round=round_, record_id=rid)], reason="why"))
            for rid, p in chosen]


def _adjust(player, dispute, amount, actor, key):
    return disputes.manual_adjustment(player=player, currency="EUR", amount=amount, reason="goodwill", actor=actor,
                                      key=key, dispute=dispute)


@pytest.mark.django_db
def test_an_officers_adjustments_are_capped_per_player_and_per_day(limits):
    (p1, d1), (p2, d2), (p3, d3) = _disputes(3)
    officer = make_operator(DISPUTE_OFFICER)
    for i in range(3):  # 50.00 each: 150.00, the cap exactly
        _adjust(p1, d1, "50.00", officer, f"p1-{i}")
    with pytest.raises(AdjustmentLimitExceeded, match="of the last 24 hours would pass 150.00"):
        _adjust(p1, d1, "0.01", officer, "p1-over")
    _adjust(p2, d2, "-50.00", officer, "p2")  # debits count by their size
    _adjust(p3, d3, "50.00", officer, "p3-first")  # 250.00 in all
    with pytest.raises(AdjustmentLimitExceeded, match="your adjustments of the last 24 hours would pass 250.00"):
        _adjust(p3, d3, "1.00", officer, "p3")
    assert Adjustment.objects.filter(status="posted").count() == 5
    disputes.manual_adjustment(player=p3, currency="EUR", amount="1.00", reason="goodwill", actor=make_operator(
        DISPUTE_OFFICER, username="officer_2"), key="p3-other", dispute=d3)  # another officer's own day


@pytest.mark.django_db
def test_an_officers_adjustment_names_a_dispute_of_that_player(limits):
    (p1, d1), (p2, _) = _disputes(2)
    officer = make_operator(DISPUTE_OFFICER)
    for dispute in (None, d1):  # none, or another player's
        with pytest.raises(AdjustmentNeedsDispute):
            _adjust(p2, dispute, "5.00", officer, f"k-{dispute}")
    assert not Adjustment.objects.exists() and not OperatorAction.objects.exists()
    assert _adjust(p1, d1.pk, "5.00", officer, "ok").status == "posted"
    assert OperatorAction.objects.get().payload["dispute"] == d1.pk
    _adjust(p2, None, "500.00", make_operator(SUPERVISOR), "boss")  # a supervisor needs none


@pytest.mark.django_db
def test_above_the_threshold_a_second_supervisor_approves(limits):
    limits.ADJUSTMENT_APPROVAL_THRESHOLD = Decimal("200.00")
    (player, _), = _disputes(1)
    before = balance(player)
    boss, other, officer = make_operator(SUPERVISOR), make_operator(SUPERVISOR, username="boss2"), make_operator(
        DISPUTE_OFFICER)
    pending = _adjust(player, None, "200.01", boss, "big")
    assert pending.status == "pending" and balance(player) == before
    assert not LedgerTransaction.objects.filter(key=pending.key).exists()
    for who in (boss, officer):
        with pytest.raises(ApprovalRefused):
            approve_adjustment(adjustment=pending, actor=who, reason="ok")
    assert approve_adjustment(adjustment=pending.pk, actor=other, reason="checked the ticket")[1] is True
    assert approve_adjustment(adjustment=pending.pk, actor=other, reason="again")[1] is False  # nothing twice
    pending.refresh_from_db()
    assert (pending.status, pending.approved_by) == ("posted", other) and balance(player) == before + Decimal("200.01")
    assert list(OperatorAction.objects.order_by("id").values_list("action", flat=True)) == [
        "request_adjustment", "approve_adjustment"]
    assert _adjust(player, None, "200.00", boss, "at-threshold").status == "posted"


@pytest.mark.django_db
def test_a_supervisor_cannot_pass_the_threshold_in_small_steps(limits):
    """Three adjustments of 1000.00 at a threshold of 1000.00: the first posts, the next waits."""
    (player, _), = _disputes(1)
    boss, other = make_operator(SUPERVISOR), make_operator(SUPERVISOR, username="boss2")
    assert _adjust(player, None, "1000.00", boss, "s1").status == "posted"
    assert _adjust(player, None, "1000.00", boss, "s2").status == "pending"
    approve_adjustment(adjustment=Adjustment.objects.get(key="adjust:manual:s2"), actor=other, reason="ticket 9")
    assert _adjust(player, None, "-0.01", boss, "s3").status == "pending"  # the posted one alone still counts
    assert _adjust(player, None, "5.00", other, "o1").status == "posted"  # another supervisor's own day


@pytest.mark.django_db
def test_a_supervisors_big_dispute_adjustment_waits_for_approval(limits):
    limits.ADJUSTMENT_APPROVAL_THRESHOLD = Decimal("50.00")
    (player, dispute), = _disputes(1)
    before, boss = balance(player), make_operator(SUPERVISOR)
    dispute, decided = disputes.decide_dispute(dispute=dispute, upheld=True, resolution="video", adjustment="60.00",
                                               actor=boss)
    assert dispute.status == "upheld" and decided and balance(player) == before
    assert disputes.decide_dispute(dispute=dispute, upheld=True, resolution="video", adjustment="60.00",
                                   actor=boss)[1] is False  # the same decision again: nothing changed
    approve_adjustment(adjustment=Adjustment.objects.get(key=dispute.adjustment_key),
                       actor=make_operator(SUPERVISOR, username="boss2"), reason="seen")
    assert balance(player) == before + Decimal("60.00")


@pytest.mark.django_db
@pytest.mark.parametrize("amount", ["1E2", "1e3", "1E+2", " 5.00", "5.000", "+5", "0x10", "NaN", "Infinity"])
def test_amounts_are_decimal_strings_without_exponent(limits, amount):
    (player, dispute), = _disputes(1)
    boss = make_operator(SUPERVISOR)
    with pytest.raises(InvalidAmount):
        _adjust(player, None, amount, boss, "x")
    with pytest.raises(InvalidAmount):
        disputes.decide_dispute(dispute=dispute, upheld=True, resolution="video", adjustment=amount, actor=boss)
    assert not Adjustment.objects.exists() and Dispute.objects.get().status == "open"


@pytest.mark.django_db
def test_amounts_are_stored_and_audited_normalised(limits):
    (player, _), = _disputes(1)
    adjustment = _adjust(player, None, "5", make_operator(SUPERVISOR), "n")
    adjustment.refresh_from_db()
    assert str(adjustment.amount.normalize()) == "5" and OperatorAction.objects.get().payload["amount"] == "5.00"


@pytest.mark.django_db
def test_the_dispute_panel_refuses_exponents_and_confirms_against_the_stake(client, limits):
    (player, dispute), = _disputes(1)
    before, officer = balance(player), make_operator(DISPUTE_OFFICER)
    url = reverse("admin:settlement_dispute_resolve", args=[dispute.pk])
    otp_login(client, officer)
    refused = client.post(url, {"decision": "upheld", "adjustment": "1e3", "reason": "video"})
    assert refused.status_code == 200 and "is not a decimal string" in refused.content.decode()
    shown = client.post(url, {"decision": "upheld", "adjustment": "10.00", "reason": "video"})
    page = shown.content.decode()
    assert shown.status_code == 200 and 'id="adjustment-confirm"' in page
    assert "10.00 EUR" in page and "The disputed stake is <strong>10.00 EUR</strong>" in page
    assert balance(player) == before and Dispute.objects.get().status == "open"
    done = client.post(url, {"decision": "upheld", "adjustment": "10.00", "reason": "video", "confirm": "1"})
    assert done.status_code == 302 and balance(player) == before + Decimal("10.00")


@pytest.mark.django_db
def test_the_wallet_page_takes_the_dispute_and_refuses_exponents(client, limits):
    (player, dispute), = _disputes(1)
    wallet = player.wallets.get(currency="EUR")
    url = reverse("admin:accounts_account_adjust", args=[wallet.pk])
    otp_login(client, make_operator(DISPUTE_OFFICER))
    page = client.post(url, {"amount": "1E2", "reason": "goodwill", "key": "k1", "dispute": dispute.pk})
    assert page.status_code == 200 and "is not a decimal string" in page.content.decode()
    page = client.post(url, {"amount": "5.00", "reason": "goodwill", "key": "k2"})
    assert "names the dispute it settles" in page.content.decode()
    assert client.post(url, {"amount": "5.00", "reason": "goodwill", "key": "k3",
                             "dispute": dispute.pk}).status_code == 302
    assert Adjustment.objects.get().dispute == dispute


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_parallel_adjustments_of_one_officer_stay_within_the_caps(limits):
    """13 adjustments of 100.00 at once on one wallet (the attack of issue 20): the per-player cap
    (150.00) lets exactly one through; the lock makes the sums exact."""
    (player, dispute), = _disputes(1)
    officer = make_operator(DISPUTE_OFFICER)
    results = run_at_once([lambda i=i: _adjust(player, dispute, "100.00", officer, f"par-{i}") for i in range(13)])
    assert sum(isinstance(r, Adjustment) for r in results) == 1
    assert all(isinstance(r, (Adjustment, AdjustmentLimitExceeded)) for r in results), results


@pytest.mark.django_db
def test_a_second_supervisor_approves_on_the_adjustments_page(client, limits):
    limits.ADJUSTMENT_APPROVAL_THRESHOLD = Decimal("200.00")
    (player, _), = _disputes(1)
    before, boss = balance(player), make_operator(SUPERVISOR)
    pending = _adjust(player, None, "300.00", boss, "big")
    url = reverse("admin:settlement_adjustment_changelist")
    form = {"action": "approve", "reason": "ticket checked", "_selected_action": [pending.pk]}
    otp_login(client, boss).post(url, form)
    assert Adjustment.objects.get().status == "pending"  # not the one who asked
    page = otp_login(client, make_operator(SUPERVISOR, username="boss2")).post(url, form, follow=True)
    assert "approved and posted" in page.content.decode() and balance(player) == before + Decimal("300.00")


@pytest.mark.django_db
def test_a_key_asked_for_again_with_another_amount_names_both_in_minor_units_and_no_key(limits):
    """The third fresh attack: the admin said "adjustment adjust:manual:… was asked for with 4.0000"."""
    (player, _), = _disputes(1)
    supervisor = make_operator(SUPERVISOR)
    _adjust(player, None, "4", supervisor, "again")
    with pytest.raises(IdempotencyConflict) as refused:
        _adjust(player, None, "6.00", supervisor, "again")
    assert str(refused.value) == "this adjustment was asked for before with 4.00, not 6.00"


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["", "k" * (disputes.KEY_LENGTH + 1), None])
def test_an_adjustment_key_of_no_or_too_many_characters_is_refused_and_moves_nothing(key):
    (player, dispute), = _disputes(1)
    before = balance(player)
    with pytest.raises(InvalidInput, match=f"key: an adjustment's key is 1 to {disputes.KEY_LENGTH} characters"):
        _adjust(player, dispute, "5.00", make_operator(SUPERVISOR), key)
    assert balance(player) == before and not Adjustment.objects.exists()
    _adjust(player, dispute, "5.00", make_operator(SUPERVISOR, username="supervisor_2"), "k" * disputes.KEY_LENGTH)
    assert balance(player) == before + Decimal("5.00")
