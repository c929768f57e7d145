"""Sidebar filters of the operator lists made of text inputs (text, date and amount ranges) and the
operator's time zone they read dates in. Bad input is ignored with a message, never a server error."""

import zoneinfo
from datetime import datetime, time, timedelta
from decimal import Decimal

from django.conf import settings
from django.contrib import admin, messages


def operator_zone(request=None):
    """The operator's time zone: the user's session zone if set, else ``settings.OPERATOR_TIME_ZONE``."""
    name = (request.session.get("operator_time_zone") if request is not None else None) or settings.OPERATOR_TIME_ZONE
    return zoneinfo.ZoneInfo(name)


#: Inputs the database can hold: money columns are numeric(20, 4); ids are bigint.
MAX_AMOUNT = Decimal(10) ** 16
MAX_ID = 2 ** 63 - 1
MIN_YEAR, MAX_YEAR = 1900, 9998


def parse_id(raw):
    """``raw`` as a database id (a positive bigint), or None."""
    if raw.isascii() and raw.isdigit():
        value = int(raw)
        return value if 0 < value <= MAX_ID else None
    return None


class InputFilter(admin.ListFilter):
    """A sidebar filter made of text inputs (``inputs`` = ``[(parameter, label, kind)]``, kind
    ``text``/``date``/``number``); subclasses implement ``filter(queryset, values)`` with the parsed
    non-empty values. Bad input (not a number, NaN, a date the database cannot hold, an id too
    large) is ignored with an error message to the operator, never a server error."""

    template = "admin/input_filter.html"
    inputs = []

    def __init__(self, request, params, model, model_admin):
        super().__init__(request, params, model, model_admin)
        for name, _, _ in self.inputs:
            if name in params:
                self.used_parameters[name] = params.pop(name)[-1].strip()

    def has_output(self):
        return True

    def expected_parameters(self):
        return [name for name, _, _ in self.inputs]

    def choices(self, changelist):
        others = [(k, v) for k, values in self.request.GET.lists() for v in values
                  if k not in self.used_parameters and k not in {n for n, _, _ in self.inputs} and k != "p"]
        yield {"inputs": [(name, label, kind, self.used_parameters.get(name, "")) for name, label, kind in self.inputs],
               "hidden": others, "clear": changelist.get_query_string(remove=self.expected_parameters())}

    def queryset(self, request, queryset):
        values = {}
        for name, label, kind in self.inputs:
            raw = self.used_parameters.get(name)
            if raw:
                parsed = self.parse(kind, raw, request)
                if parsed is None:
                    self.reject(request, label, raw, f"not a valid {'date (YYYY-MM-DD)' if kind == 'date' else kind}")
                else:
                    values[name] = parsed
        return self.filter(queryset, values) if values else queryset

    def reject(self, request, label, raw, why):
        """Tell the operator an input was ignored (once per request and input)."""
        seen = request.__dict__.setdefault("_rejected_inputs", set())
        if (self.title, label) not in seen:
            seen.add((self.title, label))
            messages.error(request, f"{self.title.capitalize()} › {label}: “{raw[:60]}” ignored ({why}).")

    @staticmethod
    def parse(kind, raw, request):
        """``raw`` as a str (text: one holding a NUL never gets here, ``adminkit.query``), a finite
        Decimal within the money columns' range (number) or an aware datetime at the start of the
        day in the operator's zone (date, years 1900-9998: the day after must exist too); None if
        it does not parse."""
        try:
            if kind == "number":
                value = Decimal(raw)
                return value if value.is_finite() and value.copy_abs() < MAX_AMOUNT else None
            if kind == "date":
                day = datetime.strptime(raw, "%Y-%m-%d").date()
                if not MIN_YEAR <= day.year <= MAX_YEAR:
                    return None
                return datetime.combine(day, time(0), tzinfo=operator_zone(request))
        except (ArithmeticError, ValueError):  # InvalidOperation, decimal Overflow, OverflowError
            return None
        return raw

    def filter(self, queryset, values):
        raise NotImplementedError


class DateRangeFilter(InputFilter):
    """``<field>`` from one day to another (both inclusive) in the operator's time zone."""

    field = None

    def filter(self, queryset, values):
        name_from, name_to = (n for n, _, _ in self.inputs)
        if name_from in values:
            queryset = queryset.filter(**{f"{self.field}__gte": values[name_from]})
        if name_to in values:
            queryset = queryset.filter(**{f"{self.field}__lt": values[name_to] + timedelta(days=1)})
        return queryset


class AmountRangeFilter(InputFilter):
    """``<field>`` between two amounts (inclusive)."""

    field = None

    def filter(self, queryset, values):
        name_min, name_max = (n for n, _, _ in self.inputs)
        if name_min in values:
            queryset = queryset.filter(**{f"{self.field}__gte": values[name_min]})
        if name_max in values:
            queryset = queryset.filter(**{f"{self.field}__lte": values[name_max]})
        return queryset
