"""URL routes: the admin (operators' staff), the game-server API, the player API and the operator API."""

from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView

from config.errors import api_path_not_found

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/game/v1/", include("delivery.api.game.urls")),
    path("api/v1/", include("delivery.api.player.urls")),
    path("api/operator/v1/", include("delivery.api.operator.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularRedocView.as_view(url_name="schema", template_name="api/redoc.html"), name="docs"),
    re_path(r"^api/(?P<rest>.*)$", api_path_not_found),
]

# JSON errors under /api/ (unknown paths included), Django's pages elsewhere: config.errors.
handler400 = "config.errors.bad_request"
handler404 = "config.errors.page_not_found"
handler500 = "config.errors.server_error"
