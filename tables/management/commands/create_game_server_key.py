"""``python manage.py create_game_server_key STUDIO``: a new service account (API key) of a studio's
game server, printed once (the key on the last line; the signing secret before it with ``--signed``)."""

from django.core.management.base import BaseCommand, CommandError

from tables.models import Studio
from tables.studios import create_service_key


class Command(BaseCommand):
    help = ("Create a game-server API key of a studio (created with --create if it does not exist) and print it "
            "on the last line (shown once); --signed: the key must sign every request, with the secret printed "
            "before it.")

    def add_arguments(self, parser):
        parser.add_argument("studio", help="the studio's code (a slug, in any case)")
        parser.add_argument("--name", default="game server", help="the service account's name (at most 50 characters)")
        parser.add_argument("--signed", action="store_true", help="requests must be signed (HMAC-SHA256)")
        parser.add_argument("--create", metavar="NAME", default=None, help="create the studio, named NAME, if missing")

    def handle(self, *args, **o):
        if o["create"] is not None:
            Studio.objects.get_or_create(code__iexact=o["studio"],
                                         defaults={"code": o["studio"], "name": o["create"] or o["studio"]})
        try:
            key, raw, secret = create_service_key(studio=o["studio"], name=o["name"], signed=o["signed"])
        except Studio.DoesNotExist:
            raise CommandError(f"no studio {o['studio']!r} (--create NAME creates it)") from None
        self.stdout.write(f"game-server key {key.prefix} ({key.name}) of studio {key.studio.code}, shown once:")
        if secret:
            self.stdout.write(f"signing secret: {secret}")
        self.stdout.write(raw)
