"""Query filters of the operator API's bet list: the player API's, and the player."""

from django.core.validators import RegexValidator
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema_field

from delivery.api.player.filters import BetFilter, CodeFilter
from wagering.models import DailyRollup

from .serializers import CODE_PATTERN


@extend_schema_field({"type": "string", "pattern": CODE_PATTERN, "maxLength": 64})
class PlayerCodeFilter(filters.CharFilter):
    """A player's code (of the calling operator's players: the list holds no other)."""


class OperatorBetFilter(BetFilter):
    """``BetFilter`` and ``player``: one of your players' codes (another code selects no bet)."""

    player = PlayerCodeFilter(field_name="player__code", max_length=64, validators=[RegexValidator(CODE_PATTERN)],
                              help_text="One of your players' codes.")


class DailyReportFilter(filters.FilterSet):
    """Query of ``GET reports/daily``: whole days of the operator's zone (``Operator.time_zone``),
    default the 30 days to today; one currency, one table (each default all). Read by the view."""

    date_from = filters.DateFilter(method="keep", help_text="First day (YYYY-MM-DD) in your zone; default "
                                                            "29 days before date_to.")
    date_to = filters.DateFilter(method="keep", help_text="Last day (YYYY-MM-DD), inclusive; default today.")
    currency = filters.CharFilter(method="keep", max_length=8, validators=[RegexValidator(r"^[A-Z]{1,8}$")],
                                  help_text="Currency code.")
    table = CodeFilter(method="keep", max_length=32, help_text="Table code.")

    class Meta:
        model = DailyRollup
        fields = []

    def keep(self, queryset, name, value):
        return queryset
