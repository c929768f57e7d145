"""Fixtures of the wallet port's tests: the reference operator wallet as its own process."""

import pytest

from tests.operator_wallet.sandbox import Platform, Sandbox


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """One reference wallet process for the module's tests (``wallet`` resets it)."""
    process = Sandbox(log_dir=tmp_path_factory.mktemp("wallet"))
    yield process
    process.stop()


@pytest.fixture
def wallet(sandbox):
    """A ``Platform`` client of the module's wallet (its admin endpoints), reset before the test."""
    platform = Platform(sandbox.url)
    platform.reset()
    yield platform
    platform.close()
