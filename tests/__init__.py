"""The platform's tests. Their reference operator wallet listens on 127.0.0.1: the loopback
networks are allowed as wallets' addresses (``WALLET_ALLOWED_NETWORKS``) unless the environment
says otherwise, set here before the benchmarks read the settings and for every process the tests
start (workers, servers); pytest reads the settings before, ``tests/conftest.py`` applies it there."""

import os

os.environ.setdefault("WALLET_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128")
