from django.apps import AppConfig


class WebConfig(AppConfig):
    """Listed before ``django.contrib.staticfiles`` so that its ``runserver`` is the one run."""

    name = "config.web"
    label = "web"
