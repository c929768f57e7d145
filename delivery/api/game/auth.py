"""Who may call the game-server API, and its base view."""

from rest_framework.permissions import BasePermission
from rest_framework.views import APIView

from delivery.api.common import SafeJSONParser, exception_handler

GAME_SERVER_GROUP = "game_server"


class IsGameServer(BasePermission):
    """A game-server service account: an active user in the ``game_server`` group or holding
    ``wagering.use_game_api``. Superusers (operators) are not game servers."""

    message = "Only the game server may call this API."

    def has_permission(self, request, view):
        user = request.user
        if not user or not user.is_authenticated or user.is_superuser:
            return False
        return user.groups.filter(name=GAME_SERVER_GROUP).exists() or user.has_perm("wagering.use_game_api")


class GameAPIView(APIView):
    """Base of the game-server views: ``IsGameServer``, the strict parser and the error format of
    ``delivery.api.common``. ``actor`` gives the services' actor arguments for the calling service
    account."""

    permission_classes = [IsGameServer]
    parser_classes = [SafeJSONParser]

    def get_exception_handler(self):
        return exception_handler

    def actor(self):
        """``{"actor": "game-server:<username>", "actor_user": <User>}`` for a service call."""
        return {"actor": f"game-server:{self.request.user.get_username()}", "actor_user": self.request.user}
