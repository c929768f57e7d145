"""``python manage.py reset_second_factor USERNAME``: a superuser's reset of a staff user's second
factor (``adminkit.site.reset_second_factor``): their devices deleted, their enrolment window open."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from adminkit.site import reset_second_factor


class Command(BaseCommand):
    help = ("Reset a staff user's second factor: delete their TOTP devices and let them enrol a new one with their "
            "password at their next sign-in, within OTP_ENROLMENT_WINDOW_SECONDS.")

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, **o):
        user = get_user_model().objects.filter(username=o["username"]).first()
        if user is None:
            raise CommandError(f"no user {o['username']!r}")
        reset_second_factor(user)
        hours = settings.OTP_ENROLMENT_WINDOW_SECONDS / 3600
        self.stdout.write(f"{user.username}'s second factor is reset: they enrol a new device at their next "
                          f"sign-in, within {hours:g} hours")
