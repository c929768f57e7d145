"""The live schema the Schemathesis tests of the APIs drive (their settings: the ``schema_settings``
fixture of ``tests/conftest.py``)."""

import schemathesis
from django.core.wsgi import get_wsgi_application
from django.test import override_settings


def live_schema(path_regex):
    """The project's OpenAPI schema as ``/api/schema/`` serves it, its operations under
    ``path_regex`` only, called through the WSGI app (loaded at collection, before the test hosts
    are set)."""
    with override_settings(ALLOWED_HOSTS=["localhost"]):
        return schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application()).include(
            path_regex=path_regex)
