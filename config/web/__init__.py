"""The web processes' servers: ``manage.py runserver`` (``make run``, ``make serve``) as Django's
with a deep listen queue (``management.commands.runserver``), and gunicorn's worker answering its
own refusals as the APIs' JSON errors (``gunicorn``, named by ``gunicorn.conf.py``)."""
