"""Player API routes, mounted at ``/api/v1/``. Ids are taken as strings and checked in the views,
so that any malformed id answers the API's JSON 404."""

from django.urls import path

from . import views

app_name = "player_api"

urlpatterns = [
    path("me", views.MeView.as_view(), name="me"),
    path("bets/", views.BetListView.as_view(), name="bets"),
    path("bets/<str:id>", views.BetDetailView.as_view(), name="bet"),
    path("rounds/recent", views.RecentRoundsView.as_view(), name="recent-rounds"),
    path("rounds/<str:id>", views.RoundDetailView.as_view(), name="round"),
    path("ledger/", views.LedgerView.as_view(), name="ledger"),
    path("disputes/", views.DisputeListView.as_view(), name="disputes"),
    path("disputes/<str:id>", views.DisputeDetailView.as_view(), name="dispute"),
]
