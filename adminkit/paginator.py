"""A paginator that never counts a million rows, for the operator lists over bets and ledger rows."""

from django.core.paginator import Paginator
from django.db import connection
from django.utils.functional import cached_property

#: A list's header counts its rows up to this many, and says "more than" past it.
COUNT_UP_TO = 1000
#: The deepest page a list offers (``?p=``): a larger number is read as this one (a page past the
#: rows is the admin's empty-page answer), never an offset the database cannot hold.
MAX_PAGE = 100_000


class LookaheadPaginator(Paginator):
    """Never counts: fetches the requested page plus one row (ONE query), so a list over millions
    of rows costs what its first page costs, filtered or not. ``count`` is what is known (the rows
    up to this page, plus one when a next page exists); ``count_shown`` says how many rows the
    list holds, counted up to ``COUNT_UP_TO``; ``estimated_total`` gives the planner's row
    estimate of the whole table. Used with ``LookaheadPaginatorMixin``."""

    def __init__(self, object_list, per_page, page_number=1, **kwargs):
        super().__init__(object_list, per_page, **kwargs)
        self.page_number = page_number

    @cached_property
    def _rows(self):
        offset = (self.page_number - 1) * self.per_page
        return list(self.object_list[offset: offset + self.per_page + 1])

    @cached_property
    def count(self):
        return (self.page_number - 1) * self.per_page + len(self._rows)

    @property
    def has_more(self):
        """True when a page follows the requested one."""
        return len(self._rows) > self.per_page

    def page(self, number):
        number = self.validate_number(number)
        if number != self.page_number:
            return super().page(number)
        return self._get_page(self._rows[: self.per_page], number, self)

    @cached_property
    def bounded_count(self):
        """The rows of the whole list counted up to ``COUNT_UP_TO + 1`` (ONE query over at most that
        many rows of the list's index, none of its annotations computed)."""
        return self.object_list.order_by().values("pk")[:COUNT_UP_TO + 1].count()

    @property
    def count_shown(self):
        """The list's size as the header says it: ``"23 bets"``, or ``"more than 1,000 bets"``."""
        opts = self.object_list.model._meta
        n = self.bounded_count
        if n > COUNT_UP_TO:
            return f"more than {COUNT_UP_TO:,} {opts.verbose_name_plural}"
        return f"{n:,} {opts.verbose_name if n == 1 else opts.verbose_name_plural}"

    @cached_property
    def estimated_total(self):
        """The planner's estimate of the table's rows (PostgreSQL), or None."""
        if connection.vendor != "postgresql":
            return None
        with connection.cursor() as cursor:
            cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass",
                           [self.object_list.model._meta.db_table])
            row = cursor.fetchone()
        return row[0] if row and row[0] > 0 else None


class LookaheadPaginatorMixin:
    """A ModelAdmin mixin paging with ``LookaheadPaginator`` (no COUNT); the change list template
    shows previous/next instead of page numbers."""

    paginator = LookaheadPaginator
    show_full_result_count = False
    list_max_show_all = 0

    def get_paginator(self, request, queryset, per_page, orphans=0, allow_empty_first_page=True):
        try:
            number = min(max(1, int(request.GET.get("p", 1))), MAX_PAGE)
        except ValueError:
            number = 1
        return self.paginator(queryset, per_page, number, orphans=orphans,
                              allow_empty_first_page=allow_empty_first_page)
