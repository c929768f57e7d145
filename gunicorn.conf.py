"""gunicorn's settings, read by ``gunicorn config.wsgi`` started in the checkout's root (gunicorn's
default ``--config ./gunicorn.conf.py``): its own refusals answered as the APIs' JSON errors and no
secret of a path in its logs (``config.web.gunicorn``). With ``--threads`` above 1 also pass
``-k config.web.gunicorn.ThreadWorker`` (gunicorn would swap the sync worker for its own gthread)."""

worker_class = "config.web.gunicorn.SyncWorker"
logger_class = "config.web.gunicorn.Logger"
