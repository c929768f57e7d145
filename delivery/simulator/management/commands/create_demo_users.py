"""``python manage.py create_demo_users``: a demo operator and a demo player for local use (``make run``)."""

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction
from rest_framework.authtoken.models import Token

from accounts.models import Currency, Player
from accounts.services import create_player, deposit, wallet_for
from delivery.api.game.auth import GAME_SERVER_GROUP
from delivery.simulator.demo import DEPOSIT

#: The demo player is the simulator's first real player, so its bet history is not empty.
OPERATOR, PLAYER, GAME_SERVER = "demo-operator", "demo-real-0001", "demo-game-server"


class Command(BaseCommand):
    help = ("Create (or refresh) the demo operator (superuser, in the Supervisor group when it exists), "
            "the demo player (the simulator's demo-real-0001: EUR wallet with its deposit, DRF token) and a "
            "demo game-server account (in the game_server group, DRF token); print their credentials. Each "
            "run sets new random passwords; the tokens stay.")

    @transaction.atomic
    def handle(self, *args, **options):
        User = get_user_model()
        passwords = {}
        for username, staff in ((OPERATOR, True), (PLAYER, False)):
            user, _ = User.objects.get_or_create(username=username)
            user.is_staff = user.is_superuser = staff
            passwords[username] = secrets.token_urlsafe(9)
            user.set_password(passwords[username])
            user.save()
            if staff:
                user.groups.add(*Group.objects.filter(name="Supervisor"))
        player = Player.objects.filter(game_code=PLAYER).first() or create_player(
            user=User.objects.get(username=PLAYER), code=PLAYER)
        Currency.objects.get_or_create(code="EUR", defaults={"name": "Euro", "minor_units": 2})
        deposit(wallet=wallet_for(player=player, currency="EUR"), amount=DEPOSIT, key=f"demo-deposit:{PLAYER}:EUR",
                memo="demo deposit")  # the simulator's key: credited once whoever comes first
        token, _ = Token.objects.get_or_create(user=player.user)
        server, _ = User.objects.get_or_create(username=GAME_SERVER)
        server.set_unusable_password()  # a service account: its token only
        server.save()
        server.groups.add(Group.objects.get_or_create(name=GAME_SERVER_GROUP)[0])
        server_token, _ = Token.objects.get_or_create(user=server)
        self.stdout.write(
            f"Demo operator: {OPERATOR} / {passwords[OPERATOR]}  (admin: http://127.0.0.1:8000/admin/)\n"
            f"Demo player:   {PLAYER} / {passwords[PLAYER]}  API token: {token.key}\n"
            f"  e.g. curl -H 'Authorization: Token {token.key}' http://127.0.0.1:8000/api/v1/bets/\n"
            f"Demo game server: {GAME_SERVER}  API token: {server_token.key}\n"
            f"  e.g. curl -H 'Authorization: Token {server_token.key}' http://127.0.0.1:8000/api/game/v1/rounds/1/\n"
            f"API docs: http://127.0.0.1:8000/api/docs/")
