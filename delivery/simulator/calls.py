"""The game server's calls to the platform's services: a call that fails on a database error
(``OperationalError``: a lost deadlock, a lock timeout, a connection lost to a database restart;
its transaction rolled back) is sent again, as a studio resends a request
with the same idempotency key; the retries are counted (``RETRIES``) and shown in the report."""
from __future__ import annotations

import time

from django.db import OperationalError

ACTOR = "game-server:simulator"
ATTEMPTS = 5
#: Retries per service name across the process (reported; each one followed a database error).
RETRIES: dict = {}


def call(service, **kwargs):
    """``service(**kwargs, actor=ACTOR)``, retried up to ``ATTEMPTS`` times on ``OperationalError``."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return service(actor=ACTOR, **kwargs)
        except OperationalError:
            if attempt == ATTEMPTS:
                raise
            RETRIES[service.__name__] = RETRIES.get(service.__name__, 0) + 1
            time.sleep(0.05 * attempt)
