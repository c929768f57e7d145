"""``python manage.py create_demo_users``: the demo logins for local use (``make run``): the provider's
operator (admin), a staff user of one demo operator, the demo player, a fresh game-server API key
of the default studio (the demo tables' studio), and a fresh operator API key with the curl that
mints a player session with it."""

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.utils import timezone
from django_otp import user_has_device
from rest_framework.authtoken.models import Token

from accounts.models import OperatorStaff
from accounts.operators import create_api_key, upsert_player
from adminkit.roles import SUPERVISOR, ensure_roles
from adminkit.site import enrolment_open, reset_second_factor
from delivery.api.player.authentication import token_expires_at
from delivery.simulator.demo import DEMO_OPERATORS, ensure_operators
from tables.models import DEFAULT_STUDIO, Studio, StudioAPIKey, default_studio
from tables.studios import create_service_key
from wagering.selectors import has_open_bets

#: The demo player is the simulator's first real player of the first demo operator, so its bet
#: history is not empty.
OPERATOR, PLAYER, GAME_SERVER = "demo-operator", "demo-real-0001", "demo-game-server"
BRAND = next(iter(DEMO_OPERATORS))
BRAND_STAFF = f"{BRAND}-supervisor"


class Command(BaseCommand):
    help = ("Create (or refresh) the demo logins: the provider's operator (superuser, Supervisor), a Supervisor "
            f"of the demo operator {BRAND} only, the demo player ({BRAND}'s {PLAYER}, DRF token), a new "
            f"game-server API key of the {DEFAULT_STUDIO} studio and a new operator API key of {BRAND}; print "
            "them. Each run sets new random passwords and new keys (shown once); the player's token (until it "
            "expires: a new one then) and the staff's TOTP devices stay (a staff login without one may enrol at "
            "its next sign-in).")

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="the platform's address, for the examples")

    def handle(self, *args, **options):
        url = options["url"].rstrip("/")
        User = get_user_model()
        brand = ensure_operators([BRAND])[0]
        supervisor = ensure_roles()[SUPERVISOR]
        passwords = {}
        for username, superuser in ((OPERATOR, True), (BRAND_STAFF, False)):
            user, _ = User.objects.get_or_create(username=username)
            user.is_staff, user.is_superuser = True, superuser
            passwords[username] = secrets.token_urlsafe(12)
            user.set_password(passwords[username])
            user.save()
            user.groups.add(supervisor)
            if not enrolment_open(user) and not user_has_device(user, confirmed=True):
                reset_second_factor(user)  # a demo login not enrolled in its window: enrols at its next sign-in
        OperatorStaff.objects.update_or_create(user=User.objects.get(username=BRAND_STAFF),
                                               defaults={"operator": brand})
        player, _ = upsert_player(operator=brand, code=PLAYER, currencies=["EUR", "USD"],
                                  has_open_bets=has_open_bets)
        token = Token.objects.filter(user=player.user).first()
        if token is None or token_expires_at(token) <= timezone.now():  # a player's token expires: a new one
            Token.objects.filter(user=player.user).delete()
            token = Token.objects.create(user=player.user)
        studio = Studio.objects.get(pk=default_studio())
        StudioAPIKey.objects.filter(studio=studio, name=GAME_SERVER).update(revoked=True)  # the last run's
        _, server_key, _ = create_service_key(studio=studio, name=GAME_SERVER)
        _, key = create_api_key(operator=brand, name="make run")
        self.stdout.write(
            f"Provider operator: {OPERATOR} / {passwords[OPERATOR]}  (admin: {url}/admin/, sees every brand)\n"
            f"{brand.name} staff:  {BRAND_STAFF} / {passwords[BRAND_STAFF]}  (admin: sees {BRAND}'s players only)\n"
            f"  Staff sign in with a one-time code too: at the first login the admin opens {url}/admin/otp/enrol/,\n"
            f"  which shows the account's key and QR code for an authenticator app (or: oathtool --totp -b <key>).\n"
            f"Demo player:   {player.game_code}  API token: {token.key}\n"
            f"  e.g. curl -H 'Authorization: Token {token.key}' {url}/api/v1/bets/\n"
            f"Game-server API key of studio {DEFAULT_STUDIO} ({GAME_SERVER}, new each run): {server_key}\n"
            f"  e.g. curl -H 'Authorization: Bearer {server_key}' {url}/api/game/v1/tables/\n"
            f"Operator API key of {BRAND} (new each run): {key}\n"
            f"  mint a player session: curl -H 'Authorization: Bearer {key}' -H 'Content-Type: application/json' "
            f"-d '{{\"player\": \"{PLAYER}\", \"currency\": \"EUR\"}}' {url}/api/operator/v1/sessions/\n"
            f"  then: curl -H 'Authorization: Bearer <token>' {url}/api/v1/bets/\n"
            f"API docs: {url}/api/docs/")
