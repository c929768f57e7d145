"""Token authentication of the player API, with the token lookup remembered for a few seconds.

DRF's ``TokenAuthentication`` reads the token and its user on every request, and the views then
read the user's player: two queries before the page's own. Here one query reads token, user and
player together, and the result stays in this process's ``player_api_tokens`` cache (a local-memory
cache: ``config.settings``) for ``PLAYER_API_TOKEN_CACHE_SECONDS``. A deleted token, a deactivated
user or a changed player is forgotten at once in the process that saved it (signals below); other
processes stop honouring a deleted token or an inactive user within that many seconds.
"""

from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from drf_spectacular.authentication import TokenScheme
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from accounts.models import Player

#: The cache alias of the remembered tokens (one per process: local memory).
CACHE = "player_api_tokens"


class CachedTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>`` as DRF reads it; ``(user, token)`` with ``user.player``
    loaded (None-cached for a user without a player), from the ``player_api_tokens`` cache when
    there. Every cache read unpickles a copy, so concurrent requests never share a ``User``.
    ``AuthenticationFailed`` (401) for an unknown key or an inactive user, as DRF's."""

    def authenticate_credentials(self, key):
        cache = caches[CACHE]
        token = cache.get(key)
        if token is None:
            token = Token.objects.select_related("user__player").filter(key=key).first()
            if token is None:
                raise exceptions.AuthenticationFailed("Invalid token.")
            cache.set(key, token)
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        return token.user, token


class CachedTokenScheme(TokenScheme):
    """The OpenAPI security scheme of ``CachedTokenAuthentication``: DRF's token scheme under a
    name of its own (one name per authentication class)."""

    target_class = CachedTokenAuthentication
    name = "playerTokenAuth"
    priority = 0


@receiver(post_delete, sender=Token)
def _forget_token(sender, instance, **kwargs):
    caches[CACHE].delete(instance.key)


@receiver(post_save, sender=get_user_model())
@receiver(post_delete, sender=get_user_model())
@receiver(post_save, sender=Player)
@receiver(post_delete, sender=Player)
def _forget_all_tokens(sender, instance, **kwargs):
    """A user or player changed: forget every remembered token of this process (their keys are
    not at hand without a query, and such saves are rare next to API requests)."""
    caches[CACHE].clear()
