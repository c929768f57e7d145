"""Logging of the web processes (``LOGGING`` in ``config.settings``): the loggers that write request
paths (``django.request``'s 4xx/5xx lines, ``django.server``'s access lines of ``runserver``) pass
through ``RedactSecrets``, so a secret carried in a path never reaches a log."""

import logging

from delivery.api.operator.redaction import redact_secrets


class RedactSecrets(logging.Filter):
    """Lets every record through, its message with the secrets of the APIs' paths redacted
    (``delivery.api.operator.redaction.redact_secrets``)."""

    def filter(self, record):
        message = record.getMessage()
        redacted = redact_secrets(message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True
