"""Row locks of tables, rounds, shoes and seats, in the platform's one lock order
(docs/architecture.md, "Locks"): table (1st), round (2nd), shoe (3rd), seats (4th, in primary-key
order); a service takes the locks it needs in that order, wallets always last."""

from django.db import connection

from .exceptions import NotFound
from .models import Round, Seat, Shoe, Table


def lock_table(table):
    """Lock ``table``'s row (``FOR UPDATE``): one opener of a round per table at a time."""
    Table.objects.select_for_update().filter(pk=table.pk).exists()


def lock_round(round_id, *, shared=False, record=True):
    """Load round ``round_id`` (with its table and currency) under a row lock: ``FOR UPDATE`` for a
    state change, ``FOR SHARE`` (``shared``, PostgreSQL) for placing bets and extra stakes, so that
    they do not queue behind each other but a close or cancel waits for those in flight and they
    wait for it. Without ``record`` the round's record is left in the database (read if asked
    for): a boundless round's holds thousands of bets. Raises ``NotFound``."""
    if shared and connection.vendor == "postgresql":
        found = list(Round.objects.raw(f"SELECT * FROM {Round._meta.db_table} WHERE id = %s FOR SHARE",
                                       [round_id]))
    else:
        rounds = Round.objects.select_for_update().filter(pk=round_id)
        found = list(rounds if record else rounds.defer("record"))
    if not found:
        raise NotFound(f"no round {round_id}")
    round_ = found[0]
    round_.table = Table.objects.select_related("currency").get(pk=round_.table_id)
    return round_


def lock_shoe(table, sequence, *, burn_count=0):
    """Shoe ``sequence`` of ``table`` under ``FOR UPDATE``, created (shuffled now, ``burn_count``
    cards burnt) if it is new. Returns the ``Shoe``."""
    shoe, _ = Shoe.objects.select_for_update().get_or_create(table=table, sequence=sequence,
                                                            defaults={"burn_count": burn_count})
    return shoe


def lock_seats(table, *, occupied=False):
    """``table``'s seats (``occupied``: those with a player only) under ``FOR UPDATE``, in
    primary-key order; a list of ``Seat``."""
    seats = Seat.objects.select_for_update().filter(table=table)
    if occupied:
        seats = seats.filter(player__isnull=False)
    return list(seats.order_by("pk"))
