"""URL routes: the admin (operators), the game-server API and the player API."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/game/v1/", include("wagering.urls")),
]
