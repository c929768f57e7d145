"""The operator actions, as admin views: void round, resettle round (two steps: the corrected
record's card diff, then confirm), work and resolve a dispute, manual adjustment, retry a seamless
wallet movement now.

Each one checks its permission (403 otherwise), reads its object through the pages' operator
scope (``accounts.scoping.visible``: another operator's object is a 404 for operator staff), asks
for a reason, calls ONE settlement service, which enforces the rules (the adjustment limits
included), moves the money and writes the audit row, and is safe to submit twice (the services
are idempotent on the round / dispute; the adjustment form carries a one-time key). A void or a
dispute decision says what happened from what its service reports under its lock: of two
submits at once, one did it, the other was already done and changed nothing. Voiding and
resettling are the provider's: a round is shared, and they move every operator's money. Forms and
messages here, rules in the services.
"""

import json
import uuid

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Sum
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.exceptions import InsufficientFunds, InvalidAmount, PlatformError
from accounts.models import Account
from accounts.scoping import is_provider, visible
from accounts.selectors import wallet_balance
from adminkit.money import format_money
from tables.exceptions import InvalidInput, ServiceError
from tables.models import Round
from tables.validation import strict_json
from wallets.balances import ask_balance
from wallets.exceptions import NotRetryable
from wallets.models import WalletMovement

from . import disputes
from .adjustments import parse_adjustment
from .audit import NUL_REFUSED
from .exceptions import (
    AdjustmentLimitExceeded,
    AdjustmentNeedsDispute,
    AdjustmentNotAllowed,
    AlreadyResettled,
    ReasonRequired,
)
from .models import Adjustment, Dispute
from .movements import retry_movement as retry_movement_service
from .replay import build_replay, record_diff
from .selectors import effective_record
from .services import preview_resettle
from .services import resettle_round as resettle_round_service
from .voids import void_round as void_round_service

#: A NUL in a reason, as the forms say it (the service's and the player API's words).
NUL_SENTENCE = f"{NUL_REFUSED[:1].upper()}{NUL_REFUSED[1:]}."


class ReasonForm(forms.Form):
    """Every operator action says why."""

    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 80}), strip=True,
                             error_messages={"null_characters_not_allowed": NUL_SENTENCE})


class ResettleForm(ReasonForm):
    """A corrected round record (JSON) and, once previewed, the correction it follows."""

    record = forms.CharField(widget=forms.Textarea(attrs={"rows": 16, "cols": 100, "class": "vLargeTextField"}))
    after_sequence = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def clean_record(self):
        try:
            record = strict_json(self.cleaned_data["record"])
        except InvalidInput as e:
            raise forms.ValidationError(f"not a round record: {e}") from None
        except ValueError as e:
            raise forms.ValidationError(f"not JSON: {e}") from None
        if not isinstance(record, dict):
            raise forms.ValidationError("a round record is a JSON object")
        return record


def _refusal(error, player, currency):
    """The operator's sentence for a refused adjustment: for ``InsufficientFunds``, what the player's
    wallet holds, in money format (the ledger's own message names its key, the wallet's id and
    four decimals); else the error's message."""
    if not isinstance(error, InsufficientFunds):
        return str(error)
    holds = wallet_balance(player, currency)
    return f"{player.code}'s wallet holds {format_money(holds, currency, code=True)}: too little for that debit."


def _sentence(error):
    """A service error's message as a sentence for the operator: capitalised, with a full stop."""
    text = str(error)
    return f"{text[:1].upper()}{text[1:]}."


def _require(request, perm):
    if not request.user.has_perm(perm):
        raise PermissionDenied(f"needs {perm}")


def may_move_round(request, perm):
    """True when ``request.user`` may void or resettle a round (``perm``): the provider's staff with
    ``perm`` only, as a round holds every operator's bets."""
    return is_provider(request) and request.user.has_perm(perm)


def _require_round_mover(request, perm):
    if not may_move_round(request, perm):
        raise PermissionDenied(f"needs {perm}, as the provider's staff")


def _page(request, template, title, obj, **context):
    return TemplateResponse(request, template, {**admin.site.each_context(request), "title": title,
                                                "object": obj, "opts": obj._meta, **context})


def _round_url(round_id):
    return reverse("admin:tables_round_change", args=[round_id])


def void_round(request, round_id):
    """``/admin/tables/round/<id>/void/``: refund every stake of the round (``settlement.voids.void_round``)."""
    _require_round_mover(request, "tables.void_round")
    round_ = get_object_or_404(visible(request, Round.objects.select_related("table__currency")), pk=round_id)
    form = ReasonForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            _, voided = void_round_service(round_id=round_id, reason=form.cleaned_data["reason"], actor=request.user)
        except ServiceError as e:
            messages.error(request, f"Round {round_.title} was not voided: {e}")
        else:
            if voided:
                messages.success(request, f"Round {round_.title} voided: every stake refunded.")
            else:
                messages.info(request, f"Round {round_.title} was already voided: nothing changed.")
        return redirect(_round_url(round_id))
    return _page(request, "admin/actions/void_round.html", f"Void round {round_.title}", round_, form=form)


def resettle_round(request, round_id):
    """``/admin/tables/round/<id>/resettle/``: step 1 takes a corrected record and a reason and shows
    the card diff and each bet's new return (``settlement.services.preview_resettle``); step 2
    (``confirm``) resettles (``settlement.services.resettle_round``). A confirm whose correction was
    already made (a double submit) changes nothing."""
    _require_round_mover(request, "tables.resettle_round")
    round_ = get_object_or_404(visible(request, Round.objects.select_related("table__currency", "shoe")), pk=round_id)
    current = effective_record(round_)
    last = round_.corrections.order_by("-sequence").values_list("sequence", flat=True).first() or 0
    initial = {"record": json.dumps(current, indent=1), "after_sequence": last}
    form = ResettleForm(request.POST or None, initial=initial)
    context = {"form": form, "replay": build_replay(round_.pk, round_=round_)}
    if request.method == "POST" and form.is_valid():
        record, reason = form.cleaned_data["record"], form.cleaned_data["reason"]
        if "confirm" in request.POST:
            try:
                correction = resettle_round_service(round_id=round_.pk, corrected_record=record, reason=reason,
                                                    actor=request.user,
                                                    after_correction=form.cleaned_data["after_sequence"])
            except AlreadyResettled as e:
                messages.info(request, _sentence(e))
            except ServiceError as e:
                messages.error(request, f"Round {round_.title} was not resettled: {e}")
            else:
                messages.success(request, f"Round {round_.title} resettled on correction {correction.sequence}.")
            return redirect(_round_url(round_.pk))
        try:
            _, returns = preview_resettle(round_id=round_.pk, corrected_record=record)
        except ServiceError as e:
            form.add_error("record", str(e))
        else:
            context.update(diff=record_diff(current, record), returns=returns, preview=True)
    return _page(request, "admin/actions/resettle_round.html", f"Resettle round {round_.title}", round_, **context)


#: How an amount is typed: a decimal string (``accounts.money.parse_amount`` decides, in the service).
AMOUNT_HELP = "Signed, in the currency's units, e.g. 12.50 or -5 (no exponent): > 0 credits the player, < 0 debits."


class ResolveForm(ReasonForm):
    """A dispute decision: upheld or rejected, the resolution (reason) and a signed adjustment
    (text, parsed by the service's one parser); ``confirm`` once the amount was shown against the
    disputed stake."""

    decision = forms.ChoiceField(choices=[("upheld", "Upheld"), ("rejected", "Rejected")], widget=forms.RadioSelect)
    adjustment = forms.CharField(required=False, max_length=40, strip=True, help_text=AMOUNT_HELP)


class AdjustForm(ReasonForm):
    """A manual adjustment (the amount as text, parsed by the service) and the dispute it settles
    (a Dispute officer must name one); ``key`` is issued with the form so a double submit posts once."""

    amount = forms.CharField(max_length=40, strip=True, help_text=AMOUNT_HELP)
    dispute = forms.TypedChoiceField(coerce=int, required=False, empty_value=None,
                                     help_text="The dispute this settles (required for a Dispute officer).")
    key = forms.CharField(widget=forms.HiddenInput, max_length=disputes.KEY_LENGTH)

    def __init__(self, *args, disputes=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["dispute"].choices = [("", "—")] + [(d.pk, f"Dispute {d.pk} ({d.get_status_display()})")
                                                        for d in disputes]


def _dispute_url(dispute_id):
    return reverse("admin:settlement_dispute_change", args=[dispute_id])


def dispute_assign(request, dispute_id):
    """POST ``/admin/settlement/dispute/<id>/assign/``: take the dispute (OPEN → INVESTIGATING)."""
    _require(request, "settlement.resolve_dispute")
    dispute = get_object_or_404(visible(request, Dispute.objects.all()), pk=dispute_id)
    if request.method == "POST":
        try:
            disputes.assign_dispute(dispute=dispute, assignee=request.user, actor=request.user)
        except ServiceError as e:
            messages.error(request, f"Not assigned: {e}")
    return redirect(_dispute_url(dispute_id))


def dispute_note(request, dispute_id):
    """POST ``/admin/settlement/dispute/<id>/note/``: append a note."""
    _require(request, "settlement.resolve_dispute")
    dispute = get_object_or_404(visible(request, Dispute.objects.all()), pk=dispute_id)
    if request.method == "POST":
        try:
            disputes.add_note(dispute=dispute, author=request.user, text=request.POST.get("text", ""))
        except ServiceError as e:
            messages.error(request, f"Note not added: {e}")
    return redirect(_dispute_url(dispute_id))


def dispute_resolve(request, dispute_id):
    """``/admin/settlement/dispute/<id>/resolve/``: uphold (with an optional adjustment, by the
    rules of ``settlement.adjustments``) or reject (``settlement.disputes.decide_dispute``, which
    first assigns an OPEN dispute to the resolver); a decided one is not offered the form. An
    adjustment is first shown against the disputed stake, and posted only once confirmed. Any
    refusal keeps the form's input. Submitting the same decision twice changes nothing."""
    _require(request, "settlement.resolve_dispute")
    dispute = get_object_or_404(visible(request, Dispute.objects.select_related("player", "currency")), pk=dispute_id)
    decided = dispute.status in (Dispute.Status.UPHELD, Dispute.Status.REJECTED)
    form = ResolveForm(request.POST or None)
    context = {"form": form, "decided": decided and request.method != "POST"}
    if request.method == "POST" and form.is_valid():
        upheld, adjustment = form.cleaned_data["decision"] == "upheld", form.cleaned_data["adjustment"] or None
        try:
            amount = adjustment and parse_adjustment(adjustment, dispute.currency)
            if amount and upheld and "confirm" not in request.POST:
                stake = dispute.bets.aggregate(total=Sum("stake"))["total"]
                return _page(request, "admin/actions/resolve_dispute.html", f"Resolve dispute {dispute.pk}", dispute,
                             **context, confirm={"amount": amount, "stake": stake, "credit": amount > 0})
            _, decided = disputes.decide_dispute(dispute=dispute.pk, upheld=upheld,
                                                 resolution=form.cleaned_data["reason"], adjustment=adjustment,
                                                 actor=request.user)
        except (AdjustmentLimitExceeded, AdjustmentNotAllowed, InvalidAmount) as e:
            form.add_error("adjustment", _sentence(e))
        except PlatformError as e:
            form.add_error(None, f"Dispute {dispute.pk} was not resolved: "
                                 f"{_refusal(e, dispute.player, dispute.currency)}")
        else:
            if decided:
                messages.success(request, f"Dispute {dispute.pk} {form.cleaned_data['decision']}.{_pending(dispute)}")
            else:
                messages.info(request, f"Dispute {dispute.pk} was already {form.cleaned_data['decision']}: "
                                       "nothing changed.")
            return redirect(_dispute_url(dispute_id))
    return _page(request, "admin/actions/resolve_dispute.html", f"Resolve dispute {dispute.pk}", dispute, **context)


def _pending(dispute):
    """`` The adjustment ... awaits ...`` when ``dispute``'s adjustment waits for a second supervisor."""
    if Adjustment.objects.filter(key=dispute.adjustment_key, status=Adjustment.Status.PENDING).exists():
        return " Its adjustment awaits a second supervisor's approval (Settlement › Adjustments)."
    return ""


def account_adjust(request, account_id):
    """``/admin/accounts/account/<id>/adjust/``: credit or debit a player's wallet with a reason
    (``settlement.disputes.manual_adjustment``, by the rules of ``settlement.adjustments``)."""
    if not (request.user.has_perm("accounts.adjust_small") or request.user.has_perm("accounts.adjust_any")):
        raise PermissionDenied("needs accounts.adjust_small or accounts.adjust_any")
    wallet = get_object_or_404(visible(request, Account.objects.select_related("player", "currency")), pk=account_id,
                               kind=Account.Kind.WALLET)
    form = AdjustForm(request.POST or None, initial={"key": uuid.uuid4().hex},
                      disputes=wallet.player.disputes.filter(currency=wallet.currency).order_by("-pk"))
    if request.method == "POST" and form.is_valid():
        try:
            adjustment = disputes.manual_adjustment(
                player=wallet.player, currency=wallet.currency, amount=form.cleaned_data["amount"],
                reason=form.cleaned_data["reason"], actor=request.user, key=form.cleaned_data["key"],
                dispute=form.cleaned_data["dispute"])
        except (AdjustmentLimitExceeded, AdjustmentNeedsDispute, InvalidAmount) as e:
            form.add_error("amount", _sentence(e))
        except PlatformError as e:
            messages.error(request, f"No adjustment: {_refusal(e, wallet.player, wallet.currency)}")
            return redirect(reverse("admin:accounts_account_change", args=[wallet.pk]))
        else:
            shown = format_money(adjustment.amount, wallet.currency)
            if adjustment.status == Adjustment.Status.PENDING:
                messages.warning(request, f"Adjustment of {wallet} by {shown} awaits a second supervisor's approval "
                                          "(Settlement › Adjustments).")
            else:
                messages.success(request, f"Adjusted {wallet} by {shown}.")
            return redirect(reverse("admin:accounts_account_change", args=[wallet.pk]))
    if wallet.journal:  # a seamless player: the money is at the operator's wallet
        wallet.operator_balance = ask_balance(wallet)
    return _page(request, "admin/actions/adjust.html", f"Manual adjustment of {wallet}", wallet, form=form)


def _movement_url(movement_id):
    return reverse("admin:wallets_walletmovement_change", args=[movement_id])


@require_POST
def retry_movement(request, movement_id):
    """POST ``/admin/wallets/walletmovement/<id>/retry/`` with a reason: send a FAILED seamless
    movement again, or a failing one waiting for its backoff at once
    (``settlement.movements.retry_movement``, audited), back to the movement's page with what
    happened. A movement that cannot be sent again now is refused with why."""
    _require(request, "wallets.retry_movement")
    movement = get_object_or_404(visible(request, WalletMovement.objects.all()), pk=movement_id)
    form = ReasonForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Movement {movement.key} was not retried: a reason is required.")
        return redirect(_movement_url(movement.pk))
    try:
        retry_movement_service(movement_id=movement.pk, reason=form.cleaned_data["reason"], actor=request.user)
    except (NotRetryable, ReasonRequired) as e:
        messages.error(request, f"Movement {movement.key} was not retried: {e}.")
    else:
        messages.success(request, f"Movement {movement.key} is sent again now.")
    return redirect(_movement_url(movement.pk))
