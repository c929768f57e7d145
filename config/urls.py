"""URL routes: the admin (operators), the game-server API and the player API."""

from django.contrib import admin
from django.urls import path

urlpatterns = [
    path("admin/", admin.site.urls),
]
