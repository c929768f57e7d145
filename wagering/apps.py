from django.apps import AppConfig


class WageringConfig(AppConfig):
    default_auto_field = 'django.db.models.BigAutoField'
    name = "wagering"
