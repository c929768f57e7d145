"""The operator actions, as admin views: void round, resettle round (two steps: the corrected
record's card diff, then confirm), resolve dispute, manual adjustment.

Each one: checks its permission (403 otherwise), asks for a reason, calls the settlement service
that moves the money and writes the audit row, and is safe to submit twice (the services are
idempotent on the round / dispute; the adjustment form carries a one-time key). Views are thin:
forms here, rules in the services.
"""

import json
import uuid

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse

from accounts.exceptions import InsufficientFunds, InvalidAmount, LedgerError
from accounts.models import Account
from accounts.services import wallet_for
from delivery.backoffice.money import format_money
from settlement import disputes
from settlement.services import resettle_round as resettle_round_service
from settlement.voids import void_round as void_round_service
from settlement.models import Dispute
from settlement.selectors import effective_record
from tables.models import Round
from delivery.backoffice.replay import build_replay, record_diff
from tables.locks import lock_round
from wagering.records import check_record
from tables.exceptions import ServiceError


class ReasonForm(forms.Form):
    """Every operator action says why."""

    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 80}), strip=True)


class ResettleForm(ReasonForm):
    """A corrected round record (JSON) and, once previewed, the correction it follows."""

    record = forms.CharField(widget=forms.Textarea(attrs={"rows": 16, "cols": 100, "class": "vLargeTextField"}))
    after_sequence = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def clean_record(self):
        try:
            record = json.loads(self.cleaned_data["record"])
        except json.JSONDecodeError as e:
            raise forms.ValidationError(f"not JSON: {e}") from None
        except RecursionError:
            raise forms.ValidationError("not a round record: nested too deeply") from None
        if not isinstance(record, dict):
            raise forms.ValidationError("a round record is a JSON object")
        return record


def _refusal(error, player, currency):
    """The operator's sentence for a refused adjustment: for ``InsufficientFunds``, what the player's
    wallet holds, in money format (the ledger's own message names its key, the wallet's id and
    four decimals); else the error's message."""
    if not isinstance(error, InsufficientFunds):
        return str(error)
    holds = wallet_for(player=player, currency=currency).balance
    return f"{player.code}'s wallet holds {format_money(holds, currency, code=True)}: too little for that debit."


def _require(request, perm):
    if not request.user.has_perm(perm):
        raise PermissionDenied(f"needs {perm}")


def _page(request, template, title, obj, **context):
    return TemplateResponse(request, template, {**admin.site.each_context(request), "title": title,
                                                "object": obj, "opts": obj._meta, **context})


def _round_url(round_id):
    return reverse("admin:tables_round_change", args=[round_id])


def void_round(request, round_id):
    """``/admin/tables/round/<id>/void/``: refund every stake of the round (``tables.void_round``)."""
    _require(request, "tables.void_round")
    round_ = get_object_or_404(Round.objects.select_related("table__currency"), pk=round_id)
    form = ReasonForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if round_.state == Round.State.VOIDED:
            messages.info(request, f"Round {round_.title} was already voided: nothing changed.")
            return redirect(_round_url(round_id))
        try:
            void_round_service(round_id=round_id, reason=form.cleaned_data["reason"], actor=request.user)
        except ServiceError as e:
            messages.error(request, f"Round {round_.title} was not voided: {e}")
        else:
            messages.success(request, f"Round {round_.title} voided: every stake refunded.")
        return redirect(_round_url(round_id))
    return _page(request, "admin/backoffice/void_round.html", f"Void round {round_.title}", round_, form=form)


def resettle_round(request, round_id):
    """``/admin/tables/round/<id>/resettle/``: step 1 takes a corrected record and a reason and shows
    the card diff and each bet's new return; step 2 (``confirm``) resettles (``tables.resettle_round``).
    A confirm whose correction was already made (double submit) changes nothing."""
    _require(request, "tables.resettle_round")
    round_ = get_object_or_404(Round.objects.select_related("table__currency", "shoe"), pk=round_id)
    current = effective_record(round_)
    last = round_.corrections.order_by("-sequence").values_list("sequence", flat=True).first() or 0
    initial = {"record": json.dumps(current, indent=1), "after_sequence": last}
    form = ResettleForm(request.POST or None, initial=initial)
    context = {"form": form, "replay": build_replay(round_.pk, round_=round_)}
    if request.method == "POST" and form.is_valid():
        record, reason = form.cleaned_data["record"], form.cleaned_data["reason"]
        if "confirm" in request.POST:
            return _confirm_resettle(request, round_, record, reason, form.cleaned_data["after_sequence"])
        try:
            result = check_record(round_, record)
        except ServiceError as e:
            form.add_error("record", str(e))
        else:
            returns = [(b, result.bets[b.record_id].returned) for b in round_.bets.select_related("player").order_by("id")
                       if b.record_id in result.bets]
            context.update(diff=record_diff(current, record), returns=returns, preview=True)
    return _page(request, "admin/backoffice/resettle_round.html", f"Resettle round {round_.title}", round_, **context)


@transaction.atomic
def _confirm_resettle(request, round_, record, reason, after_sequence):
    lock_round(round_.pk)  # two confirms at once: the second sees the first's correction
    last = round_.corrections.order_by("-sequence").values_list("sequence", flat=True).first() or 0
    if after_sequence is not None and last != after_sequence:
        messages.info(request, f"Round {round_.title} was already resettled (correction {last}): nothing changed.")
        return redirect(_round_url(round_.pk))
    try:
        correction = resettle_round_service(round_id=round_.pk, corrected_record=record, reason=reason,
                                               actor=request.user)
    except ServiceError as e:
        messages.error(request, f"Round {round_.title} was not resettled: {e}")
    else:
        messages.success(request, f"Round {round_.title} resettled on correction {correction.sequence}.")
    return redirect(_round_url(round_.pk))


class ResolveForm(ReasonForm):
    """A dispute decision: upheld or rejected, the resolution (reason) and a signed adjustment."""

    decision = forms.ChoiceField(choices=[("upheld", "Upheld"), ("rejected", "Rejected")], widget=forms.RadioSelect)
    adjustment = forms.DecimalField(required=False, max_digits=20, decimal_places=4,
                                    help_text="Signed, in the dispute currency: > 0 credits the player, < 0 debits.")


class AdjustForm(ReasonForm):
    """A manual adjustment; ``key`` is issued with the form so a double submit posts once."""

    amount = forms.DecimalField(max_digits=20, decimal_places=4,
                                help_text="Signed: > 0 credits the player, < 0 debits.")
    key = forms.CharField(widget=forms.HiddenInput)


def _check_adjustment_limit(request, amount, form, field):
    """Dispute officers (``accounts.adjust_small``) adjust up to ``DISPUTE_OFFICER_ADJUSTMENT_LIMIT``;
    ``accounts.adjust_any`` has no limit. Adds a form error and returns False when not allowed."""
    if not amount or request.user.has_perm("accounts.adjust_any"):
        return True
    limit = settings.DISPUTE_OFFICER_ADJUSTMENT_LIMIT
    if request.user.has_perm("accounts.adjust_small") and abs(amount) <= limit:
        return True
    form.add_error(field, f"Adjustments above {limit} need a supervisor." if request.user.has_perm("accounts.adjust_small")
                   else "You may not make adjustments.")
    return False


def _dispute_url(dispute_id):
    return reverse("admin:settlement_dispute_change", args=[dispute_id])


def dispute_assign(request, dispute_id):
    """POST ``/admin/settlement/dispute/<id>/assign/``: take the dispute (OPEN → INVESTIGATING)."""
    _require(request, "settlement.resolve_dispute")
    dispute = get_object_or_404(Dispute, pk=dispute_id)
    if request.method == "POST":
        try:
            disputes.assign_dispute(dispute=dispute, assignee=request.user, actor=request.user)
        except ServiceError as e:
            messages.error(request, f"Not assigned: {e}")
    return redirect(_dispute_url(dispute_id))


def dispute_note(request, dispute_id):
    """POST ``/admin/settlement/dispute/<id>/note/``: append a note."""
    _require(request, "settlement.resolve_dispute")
    dispute = get_object_or_404(Dispute, pk=dispute_id)
    if request.method == "POST":
        try:
            disputes.add_note(dispute=dispute, author=request.user, text=request.POST.get("text", ""))
        except ServiceError as e:
            messages.error(request, f"Note not added: {e}")
    return redirect(_dispute_url(dispute_id))


def dispute_resolve(request, dispute_id):
    """``/admin/settlement/dispute/<id>/resolve/``: uphold (with an optional adjustment, within the
    user's adjustment limit) or reject. An OPEN dispute is assigned to the resolver first (OPEN →
    INVESTIGATING through ``settlement.disputes.assign_dispute``, in the same transaction); a
    decided one is not offered the form. A rejection with an adjustment is refused (the service
    would refuse it too); any refusal keeps the form's input. Submitting the same decision twice
    changes nothing."""
    _require(request, "settlement.resolve_dispute")
    dispute = get_object_or_404(Dispute.objects.select_related("player", "currency"), pk=dispute_id)
    decided = dispute.status in (Dispute.Status.UPHELD, Dispute.Status.REJECTED)
    form = ResolveForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        upheld = form.cleaned_data["decision"] == "upheld"
        amount = form.cleaned_data["adjustment"]
        if not upheld and amount:
            form.add_error("adjustment", f"A rejected dispute takes no adjustment ({amount} was typed): "
                                         "uphold it to adjust the wallet, or clear the amount.")
        elif _check_adjustment_limit(request, amount if upheld else None, form, "adjustment"):
            try:
                with transaction.atomic():
                    if dispute.status == Dispute.Status.OPEN:
                        disputes.assign_dispute(dispute=dispute.pk, assignee=request.user, actor=request.user)
                    disputes.resolve_dispute(dispute=dispute.pk, upheld=upheld, resolution=form.cleaned_data["reason"],
                                             adjustment=amount if upheld else None, actor=request.user)
            except (ServiceError, LedgerError, InvalidAmount) as e:
                form.add_error(None, f"Dispute {dispute.pk} was not resolved: "
                                     f"{_refusal(e, dispute.player, dispute.currency)}")
            else:
                messages.success(request, f"Dispute {dispute.pk} {form.cleaned_data['decision']}.")
                return redirect(_dispute_url(dispute_id))
    return _page(request, "admin/backoffice/resolve_dispute.html", f"Resolve dispute {dispute.pk}", dispute, form=form,
                 decided=decided and request.method != "POST")


def account_adjust(request, account_id):
    """``/admin/accounts/account/<id>/adjust/``: credit or debit a player's wallet with a reason
    (``accounts.adjust_small`` up to the limit, ``accounts.adjust_any``)."""
    if not (request.user.has_perm("accounts.adjust_small") or request.user.has_perm("accounts.adjust_any")):
        raise PermissionDenied("needs accounts.adjust_small or accounts.adjust_any")
    wallet = get_object_or_404(Account.objects.select_related("player", "currency"), pk=account_id,
                               kind=Account.Kind.WALLET)
    form = AdjustForm(request.POST or None, initial={"key": uuid.uuid4().hex})
    if request.method == "POST" and form.is_valid():
        amount = form.cleaned_data["amount"]
        if _check_adjustment_limit(request, amount, form, "amount"):
            try:
                disputes.manual_adjustment(player=wallet.player, currency=wallet.currency, amount=amount,
                                           reason=form.cleaned_data["reason"], actor=request.user,
                                           key=form.cleaned_data["key"])
            except (ServiceError, LedgerError) as e:
                messages.error(request, f"No adjustment: {_refusal(e, wallet.player, wallet.currency)}")
            else:
                messages.success(request, f"Adjusted {wallet} by {format_money(amount, wallet.currency)}.")
            return redirect(reverse("admin:accounts_account_change", args=[wallet.pk]))
    return _page(request, "admin/backoffice/adjust.html", f"Manual adjustment of {wallet}", wallet, form=form)
