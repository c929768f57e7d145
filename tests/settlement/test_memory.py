"""``settlement.memory.without_cyclic_gc``: the collector paused while the service runs, and left
as it was found after it returns or raises."""

import gc

import pytest

from settlement import results, services
from settlement.memory import without_cyclic_gc


@pytest.fixture
def collector():
    was = gc.isenabled()
    yield
    gc.enable() if was else gc.disable()


def test_the_collector_is_paused_inside_and_resumed_after_a_return_or_a_raise(collector):
    seen = []

    @without_cyclic_gc
    def service(fail=False):
        seen.append(gc.isenabled())
        if fail:
            raise ValueError("refused")
        return "done"

    gc.enable()
    assert service() == "done"
    with pytest.raises(ValueError):
        service(fail=True)
    assert seen == [False, False] and gc.isenabled()


def test_a_collector_paused_before_stays_paused_also_after_nested_calls(collector):
    inner = without_cyclic_gc(gc.isenabled)
    outer = without_cyclic_gc(lambda: (inner(), gc.isenabled()))
    gc.enable()
    assert outer() == (False, False) and gc.isenabled()
    gc.disable()
    assert outer() == (False, False) and not gc.isenabled()


def test_the_big_round_services_run_without_it():
    for service in (results.record_result, services.settle_round, services.resettle_round):
        assert service.__wrapped__ is not None and service.__code__ is without_cyclic_gc(len).__code__
