"""Authentication of the player API: a player session minted by the player's operator
(``Authorization: Bearer <session token>``), or a DRF token (``Authorization: Token <key>``: the
demo's and the tests'), each lookup remembered for a few seconds. Both expire: a session as
``accounts.operators.session_is_live`` says, a DRF token ``PLAYER_SESSION_LIFETIME_SECONDS`` after it
was made (``token_expires_at``), as long as a session may last.

DRF's ``TokenAuthentication`` reads the token and its user on every request, and the views then
read the user's player: two queries before the page's own. Here one query reads token (or
session), user and player together, and the result stays in this process's ``player_api_tokens``
cache (a local-memory cache: ``config.settings``) for ``PLAYER_API_TOKEN_CACHE_SECONDS``. A deleted
token, a revoked session, a deactivated user or a changed player is forgotten at once in the
process that saved it (signals below); other processes stop honouring a deleted token, a revoked
session or an inactive user within that many seconds. A session's expiry and idleness are checked
against the clock on every request, remembered or not.
"""

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from django.utils import timezone
from drf_spectacular.authentication import TokenScheme
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, TokenAuthentication
from rest_framework.authtoken.models import Token

from accounts.models import Player, PlayerSession
from accounts.operators import session_is_live, token_hash, touch_session
from delivery.api.common import bearer_credential

#: The cache alias of the remembered tokens (one per process: local memory).
CACHE = "player_api_tokens"


def token_expires_at(token):
    """When the DRF ``token`` stops letting its player in: ``PLAYER_SESSION_LIFETIME_SECONDS`` after
    it was made."""
    return token.created + timedelta(seconds=settings.PLAYER_SESSION_LIFETIME_SECONDS)


class CachedTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>`` as DRF reads it; ``(user, token)`` with ``user.player``
    loaded (None-cached for a user without a player), from the ``player_api_tokens`` cache when
    there. Every cache read unpickles a copy, so concurrent requests never share a ``User``.
    ``AuthenticationFailed`` (401) for an unknown or expired (``token_expires_at``) key or an
    inactive user."""

    def authenticate_credentials(self, key):
        cache = caches[CACHE]
        token = cache.get(key)
        if token is None:
            token = Token.objects.select_related("user__player").filter(key=key).first()
            if token is None:
                raise exceptions.AuthenticationFailed("Invalid token.")
            cache.set(key, token)
        if token_expires_at(token) <= timezone.now():
            raise exceptions.AuthenticationFailed("Token expired: ask for a new one.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        return token.user, token


def _session_key(digest):
    """The ``player_api_tokens`` cache key of the session whose token hashes to ``digest``."""
    return f"session:{digest}"


class PlayerSessionAuthentication(BaseAuthentication):
    """``Authorization: Bearer <session token>``: ``(user, PlayerSession)`` of a live session
    (``accounts.operators.session_is_live``: not revoked, before its ``expires_at``, used within
    ``PLAYER_SESSION_IDLE_SECONDS``), looked up by the token's hash, with ``user.player`` loaded.

    A session found live is remembered in the ``player_api_tokens`` cache; a remembered one that
    the clock says has ended is read again before it is refused (another process may have used it
    since). Each request touches the session (``accounts.operators.touch_session``: at most one
    write a minute); a touch that writes forgets the remembered copy, so that the next request
    reads the new ``last_used_at``. None without a Bearer header (the token scheme may answer);
    ``AuthenticationFailed`` (401) for an unknown, revoked, expired or idle session or an inactive
    user."""

    def authenticate(self, request):
        token = bearer_credential(request)
        if token is None:
            return None
        digest, now, cache = token_hash(token), timezone.now(), caches[CACHE]
        key = _session_key(digest)
        session = cache.get(key)
        if session is None or not session_is_live(session, now):
            session = PlayerSession.objects.select_related("player__user").filter(token_hash=digest).first()
            if session is None or not session_is_live(session, now):
                cache.delete(key)
                raise exceptions.AuthenticationFailed("Invalid, expired or revoked session.")
            cache.set(key, session)
        user = session.player.user
        if not user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        used = session.last_used_at
        if touch_session(session, now).last_used_at != used:
            cache.delete(key)
        return user, session

    def authenticate_header(self, request):
        return "Bearer"


class CachedTokenScheme(TokenScheme):
    """The OpenAPI security scheme of ``CachedTokenAuthentication``: DRF's token scheme under a
    name of its own (one name per authentication class)."""

    target_class = CachedTokenAuthentication
    name = "playerTokenAuth"
    priority = 0


class PlayerSessionScheme(OpenApiAuthenticationExtension):
    """The OpenAPI security scheme of ``PlayerSessionAuthentication``: an HTTP bearer token."""

    target_class = PlayerSessionAuthentication
    name = "playerSessionAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "A player session token, minted by the player's operator "
                               "(POST /api/operator/v1/sessions/)."}


@receiver(post_delete, sender=Token)
def _forget_token(sender, instance, **kwargs):
    caches[CACHE].delete(instance.key)


@receiver(post_save, sender=PlayerSession)
@receiver(post_delete, sender=PlayerSession)
def _forget_session(sender, instance, **kwargs):
    """A session saved (revoked) or deleted: forget it in this process."""
    caches[CACHE].delete(_session_key(instance.token_hash))


@receiver(post_save, sender=get_user_model())
@receiver(post_delete, sender=get_user_model())
@receiver(post_save, sender=Player)
@receiver(post_delete, sender=Player)
def _forget_all_tokens(sender, instance, **kwargs):
    """A user or player changed: forget every remembered token of this process (their keys are
    not at hand without a query, and such saves are rare next to API requests)."""
    caches[CACHE].clear()
