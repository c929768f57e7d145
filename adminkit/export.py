"""CSV exports of the operator pages: streamed row by row (an export never sits in memory whole),
times in the operator's zone, and every text cell a spreadsheet would take for a formula
neutralised (CSV injection: a ``record_id`` of ``=HYPERLINK(...)`` must open as text)."""

import csv
import re
from datetime import datetime

from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ERROR_FLAG
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect, StreamingHttpResponse
from django.urls import path, reverse
from django.utils import timezone

from .filters import operator_zone

#: What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


#: A plain decimal number written as text (money as ``amount_string`` writes it: ``-10.00``).
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")


def neutralised(value):
    """``value`` as a CSV cell: a text that starts like a formula (``= + - @``, a tab, a carriage
    return), after any spaces and line breaks a spreadsheet may skip (``" =1+1"``, ``"\n=1+1"``),
    or like a pipe command (``|``) gets a leading apostrophe, which spreadsheets show as text and
    never evaluate; a plain decimal number (``-10.00``: a negative amount stays a number) and other
    values are written as they are."""
    starts = (*FORMULA_STARTS, "|")
    if isinstance(value, str) and not _NUMBER.fullmatch(value) \
            and (value.startswith(starts) or value.lstrip(" \n\r\t").startswith(starts)):
        return f"'{value}"
    return value


class _Echo:
    """A file whose ``write`` returns what it is given: ``csv.writer`` then yields each line."""

    def write(self, value):
        return value


def csv_response(filename, header, rows, zone):
    """A streamed ``text/csv`` download named ``filename``: the ``header`` line, then ``rows`` (an
    iterable of sequences), datetimes in ``zone`` (ISO 8601), every cell ``neutralised``."""
    writer = csv.writer(_Echo())

    def cell(value):
        if isinstance(value, datetime):
            return timezone.localtime(value, zone).isoformat()
        return neutralised(value)

    def lines():
        yield writer.writerow([cell(v) for v in header])
        for row in rows:
            yield writer.writerow([cell(v) for v in row])

    response = StreamingHttpResponse(lines(), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class CsvExportMixin:
    """A ``ModelAdmin`` whose list exports its current search as CSV (``csv_response``) at
    ``export.csv`` (URL name ``<app>_<model>_export``); the list's template gets ``export_query``
    (its query string without the page). Set ``export_filename`` and ``export_header``, and give
    ``export_rows(queryset)``: the rows of the list's queryset, in ``export_header``'s order. A
    query the list itself refuses (an unknown field, a malformed lookup) goes back to the list's
    "?e=1" page, as the list does."""

    export_filename = "export.csv"
    export_header = ()

    def export_rows(self, queryset):
        raise NotImplementedError

    def get_urls(self):
        name = f"{self.opts.app_label}_{self.opts.model_name}_export"
        return [path("export.csv", self.admin_site.admin_view(self.export_csv), name=name)] + super().get_urls()

    def export_csv(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            queryset = self.get_changelist_instance(request).queryset
        except IncorrectLookupParameters:
            changelist = reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist")
            return HttpResponseRedirect(f"{changelist}?{ERROR_FLAG}=1")
        return csv_response(self.export_filename, self.export_header, self.export_rows(queryset),
                            operator_zone(request))

    def changelist_view(self, request, extra_context=None):
        search = request.GET.copy()
        search.pop("p", None)
        return super().changelist_view(request, {**(extra_context or {}), "export_query": search.urlencode()})
