"""Request rate limits of the player API."""

from rest_framework.settings import api_settings
from rest_framework.throttling import UserRateThrottle


class PlayerRateThrottle(UserRateThrottle):
    """Per player (per user) rate, scope ``player``: ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["player"]``
    (e.g. ``"600/min"``; the ``PLAYER_API_RATE`` environment variable in ``config.settings``).
    Read at each request, so that changed settings apply at once. Counters live in the default cache."""

    scope = "player"

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
