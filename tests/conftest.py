"""Shared test fixtures. ``make test`` runs the suite twice: on PostgreSQL with a Redis broker and
real worker processes (the production stack), and on SQLite with tasks run in-process (the
zero-setup default of ``make run``). Tests marked ``postgresql`` need the production stack
(PostgreSQL's own statements and triggers, Redis, worker processes) and are skipped on SQLite."""

import ipaddress
import os

import pytest
from django.conf import settings
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from tests.operator_wallet.sandbox import Platform, Sandbox
from tests.workers import Worker, purge_queues


def on_postgresql():
    """True when the suite runs on PostgreSQL (the production stack), False on SQLite."""
    return settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"


def pytest_configure(config):
    """The wallets' allowed networks of ``tests/__init__.py`` (the settings were read before it)."""
    settings.WALLET_ALLOWED_NETWORKS = [ipaddress.ip_network(network)
                                        for network in os.environ["WALLET_ALLOWED_NETWORKS"].split(",") if network]


def pytest_collection_modifyitems(config, items):
    if on_postgresql():
        return
    skip = pytest.mark.skip(reason="needs the production stack (PostgreSQL, Redis, worker processes)")
    for item in items:
        if "postgresql" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def celery_workers(transactional_db, tmp_path):
    """Start real Celery worker processes: ``start(name, concurrency=1, extra_env=None) -> Worker``
    (PostgreSQL and Redis only: a test using them is marked ``postgresql``).

    The broker is purged before and after; every worker is stopped at the end of the test."""
    if not on_postgresql():
        pytest.fail("real workers need PostgreSQL and Redis: mark the test postgresql")
    purge_queues()
    started = []

    def start(name="w1", concurrency=1, extra_env=None):
        worker = Worker(name, concurrency=concurrency, extra_env=extra_env, log_dir=tmp_path)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()
    purge_queues()


@pytest.fixture(autouse=True)
def _fresh_cache():
    """The cache is shared Redis in `make test`: no test sees another's throttle counters or reports."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture
def schema_settings(settings):
    """For Schemathesis (``tests.schema_support.live_schema``): test hosts, no throttle, and the
    WSGI app kept from closing the test's database connection at the end of each request (as
    Django's test client does)."""
    settings.ALLOWED_HOSTS = ["localhost", "testserver"]
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK,
                               "DEFAULT_THROTTLE_RATES": {"player": None, "operator": None, "game_server": None}}
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield settings
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def admin_client(client, admin_user):
    """pytest-django's ``admin_client``, verified by a TOTP device as the admin requires."""
    from tests.factories import otp_login

    return otp_login(client, admin_user)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """One reference operator wallet process (``python -m operator_wallet``) for a module's tests;
    ``wallet`` resets it before each."""
    process = Sandbox(log_dir=tmp_path_factory.mktemp("wallet"))
    yield process
    process.stop()


@pytest.fixture
def wallet(sandbox):
    """A ``Platform`` client of the module's reference wallet (and its admin endpoints), reset: no
    player, no fault. (tests/operator_wallet and the end-to-end tests have a ``wallet`` of their own.)"""
    platform = Platform(sandbox.url)
    platform.reset()
    yield platform
    platform.close()
