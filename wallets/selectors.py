"""Reads of the seamless movements, for reports and pages: what crossed the wallets for some
rounds, and the console of what waits at each operator's wallet."""

from dataclasses import dataclass

from django.db.models import Count, Min, Q, Sum

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


@dataclass(frozen=True)
class OperatorConsole:
    """One operator's movements waiting at its wallet: ``pending`` (not yet acknowledged: to be
    sent, being sent, or waiting for a retry), of them ``failing`` (an attempt has failed; still
    retried), ``failed`` (refused for good: for operators to resolve), and ``oldest_pending``, the
    oldest pending movement (None without one)."""

    operator: object
    pending: int = 0
    failing: int = 0
    failed: int = 0
    oldest_pending: WalletMovement | None = None


def console(operators):
    """An ``OperatorConsole`` of each of ``operators`` (``Operator``), in their order: two queries,
    over the movements still pending or failed only (index ``movement_open``)."""
    pending, failed = Q(state=WalletMovement.State.PENDING), Q(state=WalletMovement.State.FAILED)
    counts = {row["operator"]: row for row in (
        WalletMovement.objects.filter(pending | failed, operator__in=operators).values("operator")
        .annotate(pending=Count("id", filter=pending), failed=Count("id", filter=failed),
                  failing=Count("id", filter=pending & Q(failing_since__isnull=False)),
                  oldest=Min("id", filter=pending)))}
    oldest = WalletMovement.objects.in_bulk([row["oldest"] for row in counts.values() if row["oldest"]])
    consoles = []
    for operator in operators:
        row = counts.get(operator.pk)
        consoles.append(OperatorConsole(operator) if row is None else OperatorConsole(
            operator, row["pending"], row["failing"], row["failed"], oldest.get(row["oldest"])))
    return consoles


def latest_failures(operators, limit):
    """The ``limit`` latest failed attempts (``WalletCall``: no answer, or one never to retry) of
    ``operators``' movements, newest first, with their movements, players and currencies."""
    return list(WalletCall.objects.filter(outcome__in=[WalletCall.Outcome.UNKNOWN, WalletCall.Outcome.FAILED],
                                          movement__operator__in=operators)
                .select_related("movement__operator", "movement__player", "movement__currency")
                .order_by("-id")[:limit])
