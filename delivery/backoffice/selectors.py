"""Reads the operator pages share (Bet Record, bet page, player page, round page)."""

from django.db.models import Q

from settlement.models import OperatorAction

#: The Bet Record CSV columns: (header, value path for ``values_list``).
CSV_COLUMNS = [
    ("bet_id", "id"), ("record_id", "record_id"), ("placed_at", "placed_at"), ("player", "player__code"),
    ("table", "table__code"), ("variant", "table__variant"), ("round", "round__external_id"),
    ("type", "type"), ("seat", "seat"), ("stake", "stake"), ("currency", "currency_id"),
    ("state", "state"), ("outcome", "outcome"), ("returned", "returned"), ("settled_at", "settled_at"),
]


def bets_for_csv(queryset):
    """Rows of ``queryset`` as tuples of ``CSV_COLUMNS``, streamed from the database in chunks."""
    return queryset.values_list(*(path for _, path in CSV_COLUMNS)).iterator(chunk_size=2000)


def audit_trail(*targets):
    """Operator actions (audit rows) on the given model instances, newest first."""
    query = Q()
    for obj in targets:
        query |= Q(target_model=obj._meta.label_lower, target_pk=str(obj.pk))
    return list(OperatorAction.objects.filter(query).select_related("actor")) if targets else []
