"""Who calls the operator API: an operator, through one of its API keys."""

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission

from accounts.models import OperatorAPIKey
from delivery.api.common import bearer_credential


class OperatorKeyAuthentication(BaseAuthentication):
    """``Authorization: Bearer <key>``: ``(AnonymousUser, OperatorAPIKey)`` for a usable key
    (djangorestframework-api-key's ``get_from_key``: known, not revoked, its hash matching; and not
    past its ``expiry_date``), with its ``operator`` loaded: the request's operator is
    ``request.auth.operator`` (no Django user stands behind a key). None without a Bearer header
    (401 ``not_authenticated``); ``AuthenticationFailed`` (401 ``authentication_failed``, one
    sentence for every cause) for a malformed, unknown, revoked or expired key."""

    def authenticate(self, request):
        raw = bearer_credential(request)
        if raw is None:
            return None
        try:
            key = OperatorAPIKey.objects.get_from_key(raw)
        except OperatorAPIKey.DoesNotExist:
            key = None
        if key is None or key.has_expired:
            raise exceptions.AuthenticationFailed("Invalid, revoked or expired API key.")
        return AnonymousUser(), key

    def authenticate_header(self, request):
        return "Bearer"


class IsOperator(BasePermission):
    """A request authenticated by an operator's API key (``OperatorKeyAuthentication``)."""

    def has_permission(self, request, view):
        return isinstance(request.auth, OperatorAPIKey)


class OperatorKeyScheme(OpenApiAuthenticationExtension):
    """The OpenAPI security scheme of ``OperatorKeyAuthentication``: an HTTP bearer token."""

    target_class = OperatorKeyAuthentication
    name = "operatorKeyAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "The operator's API key, shown once when it was created."}
