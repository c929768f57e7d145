"""Fixtures of the settlement tests: after every test that used the database, the ledger reconciles."""

import pytest

from wallets.reconcile import reconcile


@pytest.fixture(autouse=True)
def ledger_reconciles(request):
    """After each database test: ``wallets.reconcile.reconcile`` finds no breach."""
    yield
    if request.node.get_closest_marker("django_db"):
        report = reconcile()
        assert report.ok, report.breaches
