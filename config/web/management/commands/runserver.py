"""``manage.py runserver``: Django's development server (with ``django.contrib.staticfiles``'s
static files), taking ``REQUEST_QUEUE_SIZE`` connections waiting to be accepted where Django's
takes 10 and refuses the rest: the zero-setup default serves many clients at once."""

from django.contrib.staticfiles.management.commands.runserver import Command as StaticFilesRunserver
from django.core.servers.basehttp import WSGIServer

#: The listen queue of the server's socket (the kernel caps it at ``net.core.somaxconn``).
REQUEST_QUEUE_SIZE = 1024


class QueueingWSGIServer(WSGIServer):
    request_queue_size = REQUEST_QUEUE_SIZE


class Command(StaticFilesRunserver):
    server_cls = QueueingWSGIServer
