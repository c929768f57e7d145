"""Python's cyclic garbage collector held off while a service builds a big round's objects.

Taking, checking and settling the record of a boundless round builds objects by the hundred
thousand (the engine's results, the bets' rows, the plan, the payouts) that all live until the
service returns. Every so many allocations CPython's cyclic collector runs, and its older
generations scan every live object again, these included: work that grows with the round and
frees nothing, since none of them is garbage before the service ends. Reference counting frees
what is not in a cycle whether the collector runs or not."""

import gc
from functools import wraps


def without_cyclic_gc(function):
    """``function`` run with the cyclic garbage collector paused (``gc.disable``), and resumed
    after it returns or raises, unless it was paused already when it was called (by the process,
    or by an outer call): the collector is left as it was found."""

    @wraps(function)
    def paused(*args, **kwargs):
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return paused
