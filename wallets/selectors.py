"""Reads of the seamless movements, for reports and pages."""

from django.db.models import Count, Sum

from .models import WalletCall, WalletMovement


def movement_summary(round_refs):
    """What crossed the operators' wallets for the rounds ``round_refs`` (``round_ref`` strings):
    ``[(operator code, call, kind, state, movements, amount)]`` sorted, ``amount`` a ``Decimal``
    in the currencies' major units (summed over currencies), and the number of calls (attempts)
    sent for them."""
    movements = WalletMovement.objects.filter(round_ref__in=round_refs)
    rows = sorted((code, call, kind, state, n, amount) for code, call, kind, state, n, amount in
                  movements.values("operator__code", "call", "kind", "state")
                  .annotate(n=Count("id"), amount=Sum("amount"))
                  .values_list("operator__code", "call", "kind", "state", "n", "amount"))
    return rows, WalletCall.objects.filter(movement__in=movements).count()
