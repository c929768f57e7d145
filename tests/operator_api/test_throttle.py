"""The operator and game-server APIs' rate per API key (``delivery.api.throttles.KeyThrottle``)
under parallel requests: each one counts."""

import threading
from types import SimpleNamespace

from django.core.cache import cache

from delivery.api.throttles import KeyThrottle


def test_parallel_requests_of_one_key_are_each_counted(settings):
    """The seventh fresh attack: 2,000 requests 50 at a time got 1,654 answers at a
    rate of 1,200/min (DRF's scoped throttle reads, appends to and writes back one list). Here 40
    requests at once at a rate of 10/min: exactly 10 pass."""
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {
        **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "operator": "10/min"}}
    cache.clear()
    request = SimpleNamespace(auth=SimpleNamespace(prefix="k-parallel"))
    view = SimpleNamespace(throttle_scope="operator")
    start, allowed = threading.Barrier(40), []

    def call():
        start.wait(10)
        allowed.append(KeyThrottle().allow_request(request, view))

    threads = [threading.Thread(target=call) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert (allowed.count(True), len(allowed)) == (10, 40)
    other = SimpleNamespace(auth=SimpleNamespace(prefix="k-other"))
    assert KeyThrottle().allow_request(other, view)  # per key
    cache.clear()
