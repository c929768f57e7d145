"""Game-server API routes, mounted at ``/api/game/v1/``."""

from django.urls import path

from . import views

app_name = "game_api"

urlpatterns = [
    path("tables/", views.TablesView.as_view(), name="tables"),
    path("tables/<slug:code>/rounds/", views.OpenRoundView.as_view(), name="open-round"),
    path("rounds/<int:pk>/", views.RoundView.as_view(), name="round"),
    path("rounds/<int:pk>/bets/", views.BetsView.as_view(), name="bets"),
    path("rounds/<int:pk>/close/", views.CloseView.as_view(), name="close"),
    path("rounds/<int:pk>/extras/", views.ExtrasView.as_view(), name="extras"),
    path("rounds/<int:pk>/events/", views.PlayEventsView.as_view(), name="events"),
    path("rounds/<int:pk>/result/", views.ResultView.as_view(), name="result"),
    path("rounds/<int:pk>/suspend/", views.SuspendView.as_view(), name="suspend"),
    path("rounds/<int:pk>/resume/", views.ResumeView.as_view(), name="resume"),
    path("rounds/<int:pk>/cancel/", views.CancelView.as_view(), name="cancel"),
]
