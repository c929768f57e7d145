"""Operator API routes, mounted at ``/api/operator/v1/``. Codes, tokens and ids are taken as strings
and checked by the services and views, so that any malformed one answers the API's JSON 404.
``DELETE sessions/{token}`` carries a secret in its path: the audit and the logs show it redacted
(``redaction``); ``POST sessions/end`` takes the token in its body instead."""

from django.urls import path

from . import views

app_name = "operator_api"

urlpatterns = [
    path("players/", views.PlayersView.as_view(), name="players"),
    path("players/<str:code>", views.PlayerView.as_view(), name="player"),
    path("players/<str:code>/balance", views.BalanceView.as_view(), name="balance"),
    path("sessions/", views.SessionsView.as_view(), name="sessions"),
    path("sessions/end", views.SessionEndView.as_view(), name="session-end"),
    path("sessions/<str:token>", views.SessionView.as_view(), name="session"),
    path("transfers/", views.TransfersView.as_view(), name="transfers"),
    path("bets/", views.BetListView.as_view(), name="bets"),
    path("rounds/<str:id>", views.RoundView.as_view(), name="round"),
    path("statement/", views.StatementView.as_view(), name="statement"),
    path("reports/daily", views.DailyReportView.as_view(), name="daily_report"),
]

