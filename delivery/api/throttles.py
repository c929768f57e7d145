"""Request rate limits of the three APIs: a counter per caller (a player, an API key) and fixed
window, one cache round trip per request, and atomic: parallel requests each count (Redis INCR;
the zero-setup local memory cache's ``incr`` under its lock). DRF's own throttles read, append to
and write back a list of times, so that parallel requests overwrote each other's counts."""

import time
from functools import cache as once

import redis
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

#: Seconds of each rate period letter (as DRF's rates: ``600/min``, ``10/s``, ``1000/hour``, ``5000/day``).
PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class WindowThrottle(BaseThrottle):
    """At most N requests per caller (``ident``) in each window of the rate
    ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"][scope]`` (e.g. ``"600/min"``; None: no limit), read at
    each request so that changed settings apply at once. Fixed windows aligned on the clock: a
    caller may make up to 2N requests across a window's end, never more. Every request counts,
    refused ones too. The counters live in the default cache (``count_request``); refused requests
    get ``Retry-After`` = the seconds left in the window."""

    scope = None

    def scope_of(self, view):
        """The rate's scope for ``view``'s requests."""
        return self.scope

    def ident(self, request):
        """Whose requests ``request`` counts among (a str or int)."""
        raise NotImplementedError

    def allow_request(self, request, view):
        scope = self.scope_of(view)
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(scope) if scope else None
        if rate is None:
            return True
        limit, period = rate.split("/")
        window = PERIODS[period[0]]
        now = time.time()
        start = int(now // window * window)
        self.retry_after = start + window - now
        # The counter outlives its window, so that no request of the window finds it expired.
        key = f"throttle:{scope}:{self.ident(request)}:{window}:{start}"
        return count_request(key, 2 * window) <= int(limit)

    def wait(self):
        return self.retry_after


class KeyThrottle(WindowThrottle):
    """Per API key (``request.auth.prefix``: an operator's, or a studio service account's), at the
    rate of the view's ``throttle_scope`` (``operator``, ``game_server``)."""

    def scope_of(self, view):
        return getattr(view, "throttle_scope", None)

    def ident(self, request):
        return request.auth.prefix


class PlayerRateThrottle(WindowThrottle):
    """Per player (per user), at the rate ``player`` (``PLAYER_API_RATE``). A subclass with another
    ``scope`` counts its views apart, at that scope's rate."""

    scope = "player"

    def ident(self, request):
        return request.user.pk


class MeRateThrottle(PlayerRateThrottle):
    """``GET me``'s own, tighter rate per player (``player_me``, ``PLAYER_ME_API_RATE``), on top of
    the player rate: each answer may ask the operator's wallet for a seamless player's balance."""

    scope = "player_me"


def count_request(key, seconds):
    """Add one to the counter ``key`` of the default cache (a new counter starts at 0 and lives
    at least ``seconds``); returns its new value. With Redis as the default cache: INCR and EXPIRE
    in one pipelined round trip; with any other cache (the zero-setup local memory) ``add`` +
    ``incr``."""
    cache = caches["default"]  # the backend itself (django.core.cache.cache is a proxy of it)
    if isinstance(cache, RedisCache):
        stored = cache.make_key(key)
        count, _ = _redis().pipeline(transaction=False).incr(stored).expire(stored, seconds).execute()
        return count
    cache.add(key, 0, seconds)
    return cache.incr(key)


@once
def _redis():
    """A client of the default cache's Redis (its first server, the one Django writes to)."""
    location = settings.CACHES["default"]["LOCATION"]
    return redis.Redis.from_url(location if isinstance(location, str) else location[0])
