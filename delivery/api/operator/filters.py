"""Query filters of the operator API's bet list: the player API's, and the player."""

from django.core.validators import RegexValidator
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema_field

from delivery.api.player.filters import BetFilter

from .serializers import CODE_PATTERN


@extend_schema_field({"type": "string", "pattern": CODE_PATTERN, "maxLength": 64})
class PlayerCodeFilter(filters.CharFilter):
    """A player's code (of the calling operator's players: the list holds no other)."""


class OperatorBetFilter(BetFilter):
    """``BetFilter`` and ``player``: one of your players' codes (another code selects no bet)."""

    player = PlayerCodeFilter(field_name="player__code", max_length=64, validators=[RegexValidator(CODE_PATTERN)],
                              help_text="One of your players' codes.")
