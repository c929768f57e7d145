"""Fixtures of the reference wallet's tests: plain processes and HTTP, no database."""

import pytest

from tests.operator_wallet.sandbox import Platform, Sandbox


@pytest.fixture(scope="session")
def shared_sandbox(tmp_path_factory):
    """One wallet process with the default arguments, shared by the tests (``wallet`` resets it)."""
    sandbox = Sandbox(log_dir=tmp_path_factory.mktemp("wallet"))
    yield sandbox
    sandbox.stop()


@pytest.fixture
def wallet(shared_sandbox):
    """A ``Platform`` client of the shared wallet, reset (no player, no fault) before the test."""
    platform = Platform(shared_sandbox.url)
    platform.reset()
    yield platform
    platform.close()


@pytest.fixture
def start_wallet(tmp_path):
    """``start_wallet(*args, state=None) -> (Sandbox, Platform)``: a wallet process of the test's
    own, stopped at its end."""
    started = []

    def start(*args, state=None):
        sandbox = Sandbox(*args, state=state, log_dir=tmp_path)
        platform = Platform(sandbox.url)
        started.append((sandbox, platform))
        return sandbox, platform

    yield start
    for sandbox, platform in started:
        platform.close()
        sandbox.stop()
