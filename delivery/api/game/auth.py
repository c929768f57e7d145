"""Who may call the game-server API: a studio's service account (``tables.models.StudioAPIKey``),
with ``Authorization: Bearer <key>`` and, when its key has a signing secret, a signature
(``delivery.api.game.signing``); its base view, scoped to the caller's studio."""

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission
from rest_framework.views import APIView

from delivery.api.common import (
    JSONOnly,
    SafeJSONParser,
    bearer_credential,
    refuse_nul_query_params,
    refuse_repeated_query_params,
    refuse_unknown_query_params,
)
from delivery.api.throttles import KeyThrottle
from tables.models import StudioAPIKey
from tables.studios import check_studio_round

from . import signing
from .errors import exception_handler


class StudioKeyAuthentication(BaseAuthentication):
    """``Authorization: Bearer <key>``: ``(AnonymousUser, StudioAPIKey)`` for a usable key
    (djangorestframework-api-key's ``get_from_key``: known, not revoked, its hash matching, not
    past its ``expiry_date``) with its ``studio`` loaded, whose request is signed when the key
    has a signing secret. None without a Bearer header (401 ``not_authenticated``);
    ``AuthenticationFailed`` (401 ``authentication_failed``) otherwise."""

    def authenticate(self, request):
        raw = bearer_credential(request)
        if raw is None:
            return None
        try:
            key = StudioAPIKey.objects.get_from_key(raw)
        except StudioAPIKey.DoesNotExist:
            key = None
        if key is None or key.has_expired:
            raise exceptions.AuthenticationFailed("Invalid, revoked or expired API key.")
        if key.signing_secret:
            signing.verify(request._request, key.signing_secret, key.pk)
        return AnonymousUser(), key

    def authenticate_header(self, request):
        return "Bearer"


class StudioKeyScheme(OpenApiAuthenticationExtension):
    """The OpenAPI security scheme of ``StudioKeyAuthentication``: an HTTP bearer token."""

    target_class = StudioKeyAuthentication
    name = "studioKeyAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "A studio's game-server API key, shown once when it was created. A key with a "
                               "signing secret also signs each request (X-Signature-Timestamp, X-Signature-Nonce, "
                               "X-Signature)."}


class IsGameServer(BasePermission):
    """A request authenticated by a studio's service-account key (``StudioKeyAuthentication``)."""

    message = "Only the game server may call this API."

    def has_permission(self, request, view):
        return isinstance(request.auth, StudioAPIKey)


class GameAPIView(JSONOnly, APIView):
    """Base of the game-server views: ``StudioKeyAuthentication``, ``IsGameServer``, a throttle
    per service account (scope ``game_server``, ``GAME_SERVER_API_RATE``), JSON only, the strict
    parser and the error format of ``delivery.api.common``. ``studio`` is the caller's studio, ``actor()``
    the services' actor arguments; ``own_round(pk)`` refuses another studio's round as unknown.
    A query parameter not among the view's ``query_parameters``, given more than once or holding a
    NUL character is refused (400 ``invalid_input``)."""

    #: The query parameters the view reads (``?format=`` is none of them: answers are JSON only).
    query_parameters = frozenset()

    authentication_classes = [StudioKeyAuthentication]
    permission_classes = [IsGameServer]
    throttle_classes = [KeyThrottle]
    throttle_scope = "game_server"
    parser_classes = [SafeJSONParser]

    def get_exception_handler(self):
        return exception_handler

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        refuse_nul_query_params(request)  # first: no other refusal echoes a NUL
        refuse_unknown_query_params(request, self.query_parameters)
        refuse_repeated_query_params(request)

    @property
    def studio(self):
        return self.request.auth.studio

    def actor(self):
        """``{"actor": "game-server:<studio>/<key name>", "actor_user": None}`` for a service call."""
        return {"actor": self.request.auth.actor, "actor_user": None}

    def own_round(self, pk):
        """``pk`` when round ``pk`` is at a table of the caller's studio; ``NotFound`` otherwise."""
        check_studio_round(self.studio, pk)
        return pk
