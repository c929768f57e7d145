"""Request rate limits of the operator API: per API key."""

from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle


class OperatorKeyThrottle(ScopedRateThrottle):
    """DRF's scoped throttle on the view's ``throttle_scope`` (``operator``), counted per API key
    (its ``prefix``) in the default cache: at most ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    ["operator"]`` requests (e.g. ``"1200/min"``, from the ``OPERATOR_API_RATE`` environment
    variable; None: no limit) in any sliding window of the period, read at each request so that
    changed settings apply at once. Refused requests (429, with ``Retry-After``) do not count."""

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": request.auth.prefix}
