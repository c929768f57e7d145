"""Celery tasks of tables: the theoretical RTP of a table (``tables.rtp``)."""

from celery import shared_task

from . import rtp
from .models import Table


@shared_task(name="tables.compute_table_rtp")
def compute_table_rtp(table_id):
    """Compute and cache the exact RTP report of table ``table_id``'s rules in force (nothing when
    already cached); queued by the table admin's save. Returns the cache key."""
    table = Table.objects.get(pk=table_id)
    rtp.table_report(table, compute=True)
    return rtp.rules_key(table.rules())
