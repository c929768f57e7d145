"""``manage.py run_tables`` (what ``make run`` prints): the report on stdout, the libraries' warnings
apart on stderr, once each."""

import warnings
from io import StringIO
from unittest import mock

import pytest
from django.core.management import call_command

from delivery.simulator import runner
from tests.conftest import on_postgresql

pytestmark = pytest.mark.django_db(transaction=True)


def test_warnings_stay_out_of_the_report(request):
    if on_postgresql():
        request.getfixturevalue("celery_workers")("sim", concurrency=1)
    original = runner.wait_for_settlement

    def noisy(*args, **kwargs):
        for _ in range(3):
            warnings.warn("a library's noise", DeprecationWarning, stacklevel=1)
        return original(*args, **kwargs)

    out, err = StringIO(), StringIO()
    with mock.patch.object(runner, "wait_for_settlement", noisy):
        call_command("run_tables", "--rounds", "2", "--variants", "boundless", "--currencies", "EUR",
                     "--boundless-players", "3", "--operator", "north", "--fault-rate", "0", "--no-progress",
                     stdout=out, stderr=err)
    assert "noise" not in out.getvalue() and "reconcile" in out.getvalue()
    assert err.getvalue().count("a library's noise") == 1 and "(3x)" in err.getvalue()
