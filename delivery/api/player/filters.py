"""Query filters of the player API (django-filter): the bet list's, and ``tz`` alone for the
answers that only show times (a bet's detail, the ledger)."""

import zoneinfo
from datetime import UTC, datetime, time, timedelta
from functools import cache

from django import forms
from django_filters import rest_framework as filters
from drf_spectacular.utils import OpenApiParameter, extend_schema_field

from tables.models import Variant
from wagering.models import Bet

from .pagination import MAX_ID


@cache
def time_zones():
    """The IANA time-zone names this system knows (a frozenset), plus ``UTC``; not the tz
    database's non-zones: ``localtime`` (the host's zone), ``Factory``, ``posixrules``."""
    return frozenset(zoneinfo.available_timezones()) - NOT_ZONES | {"UTC"}


#: Names some systems' zoneinfo lists that are no IANA time zone.
NOT_ZONES = frozenset({"localtime", "Factory", "posixrules", "posix", "right"})


@extend_schema_field({"type": "integer", "format": "int64", "minimum": 1, "maximum": MAX_ID})
class IdFilter(filters.NumberFilter):
    """A primary key: a whole number from 1 to the bigint maximum (bigger is malformed: 400)."""

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs):
        super().__init__(*args, min_value=1, max_value=MAX_ID, **kwargs)


@extend_schema_field({"type": "string", "minLength": 1, "maxLength": 32, "pattern": r"^[^\x00]*$"})
class CodeFilter(filters.CharFilter):
    """A table code: 1 to 32 characters, no NUL (no query parameter holds one)."""


class TimeZoneField(forms.CharField):
    """An IANA time-zone name this system knows (``Europe/Berlin``)."""

    def validate(self, value):
        super().validate(value)
        if value and value not in time_zones():
            raise forms.ValidationError("unknown time zone %(zone)s", params={"zone": repr(value[:64])})  # % in it


@extend_schema_field({"type": "string", "enum": sorted(time_zones())})
class TimeZoneFilter(filters.CharFilter):
    """``tz``: validated by ``TimeZoneField``, listed in full in the schema."""

    field_class = TimeZoneField


class StrictBooleanField(forms.Field):
    """``true``/``1`` or ``false``/``0`` (anything else is a validation error, not a silent None)."""

    def to_python(self, value):
        if value in (None, ""):
            return None
        if value in ("true", "1"):
            return True
        if value in ("false", "0"):
            return False
        raise forms.ValidationError("true or false")


@extend_schema_field({"type": "boolean"})
class FlagFilter(filters.Filter):
    """A boolean query flag read by the view, not a filter (``StrictBooleanField``)."""

    field_class = StrictBooleanField

    def filter(self, queryset, value):
        return queryset


#: ``tz`` of an answer that shows times.
TZ_HELP = "IANA time zone of the times shown (default UTC)."
#: ``tz`` in the schema of a view that is not a list (drf-spectacular lists filters of lists only).
TZ_PARAMETER = OpenApiParameter("tz", {"type": "string", "enum": sorted(time_zones())}, description=TZ_HELP)


class ZoneFilter(filters.FilterSet):
    """``tz`` (IANA name, default UTC): the time zone an answer's times are shown in; it selects
    nothing (``zone()`` gives it to the view)."""

    tz = TimeZoneFilter(method="filter_tz", help_text=TZ_HELP)

    class Meta:
        fields = []

    def get_form_class(self):
        """django-filter's form class, built once per filter set class, a subclass's of its own
        fields (it builds a new class with new fields for each request otherwise; the form copies
        the fields it is given anyway)."""
        filterset = type(self)
        if "_form_class" not in filterset.__dict__:
            filterset._form_class = super().get_form_class()
        return filterset._form_class

    def zone(self):
        """The requested ``ZoneInfo`` (UTC when none)."""
        name = self.form.cleaned_data.get("tz")
        return zoneinfo.ZoneInfo(name) if name else UTC

    def filter_tz(self, queryset, name, value):
        return queryset  # for display (and the bet list's day boundaries)


class BetFilter(ZoneFilter):
    """Filters of ``GET /api/v1/bets/``. ``date_from`` / ``date_to`` are calendar days (inclusive)
    in the time zone ``tz`` (IANA name, default UTC): ``date_from=2026-03-31&tz=Europe/Berlin``
    starts at 2026-03-30T22:00Z."""

    date_from = filters.DateFilter(method="filter_date_from", help_text="First day (YYYY-MM-DD) in `tz`.")
    date_to = filters.DateFilter(method="filter_date_to", help_text="Last day (YYYY-MM-DD), inclusive, in `tz`.")
    tz = TimeZoneFilter(method="filter_tz",
                        help_text="IANA time zone of the day boundaries and of the times shown (default UTC).")
    table = CodeFilter(field_name="table__code", max_length=32, help_text="Table code.")
    variant = filters.ChoiceFilter(field_name="table__variant", choices=Variant.choices)
    type = filters.ChoiceFilter(choices=Bet.Type.choices, help_text="Bet type.")
    state = filters.ChoiceFilter(choices=Bet.State.choices)
    outcome = filters.ChoiceFilter(choices=[(o, o) for o in Bet.OUTCOMES])
    round = IdFilter(field_name="round_id", help_text="Round id.")
    totals = FlagFilter(help_text="true: add `totals` over every bet the filters select (all pages); "
                                  "they cost a scan of those bets, so ask once, not on every page.")

    class Meta:
        model = Bet
        fields = []

    def _midnight(self, day):
        """The midnight that starts ``day`` in the player's zone, in UTC; None where that instant
        lies outside the years 1-9999 (``date_from=0001-01-01`` east of UTC): no bet is that early
        or that late, so the bound filters nothing out."""
        try:
            return datetime.combine(day, time.min, tzinfo=self.zone()).astimezone(UTC)
        except OverflowError:
            return None

    def filter_date_from(self, queryset, name, value):
        start = self._midnight(value)
        return queryset if start is None else queryset.filter(placed_at__gte=start)

    def filter_date_to(self, queryset, name, value):
        end = None if value == value.max else self._midnight(value + timedelta(days=1))
        return queryset if end is None else queryset.filter(placed_at__lt=end)
