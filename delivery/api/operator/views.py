"""Operator API views (``/api/operator/v1/``): thin wrappers over the operator services
(``accounts.operators``) and the selectors (``wagering.selectors``, ``accounts.selectors``,
``settlement.selectors``), one call each. A key acts on its own operator's players and data only:
another operator's player, session, bet or round answers 404, exactly like one that does not exist.

Errors are ``{"code": ..., "detail": ...}`` (``delivery.api.base``): 400 ``invalid_input`` (a body
field missing, unknown, repeated or of the wrong JSON type, unknown or repeated query parameters,
NUL bytes, a bad cursor), ``invalid_amount``, ``currency_not_allowed``; 401 ``not_authenticated`` /
``authentication_failed``; 404 ``not_found``; 409 ``insufficient_funds``, ``balance_limit``,
``idempotency_conflict``, ``wrong_wallet_mode``, ``wallet_kept``, ``account_kind_in_use``; 429
``throttled``. Nothing is
written when one is answered, except the call's audit row.
"""


from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions as drf
from rest_framework import status
from rest_framework.response import Response

from accounts.models import Currency, LedgerEntry, OperatorAPIKey
from accounts.operators import balances, open_session, player_of, record_call, revoke_session, transfer, upsert_player
from accounts.selectors import statement_entries
from delivery.api.base import ID_PARAMETER, StrictAPIView
from delivery.api.common import ErrorSerializer
from delivery.api.player.bet_list import BetList
from delivery.api.throttles import KeyThrottle
from settlement.selectors import round_public
from wagering import selectors
from wagering.models import DailyRollup
from wagering.reports import Selection, default_first_day, report, rollup_totals

from . import examples
from . import serializers as s
from .authentication import IsOperator, OperatorKeyAuthentication
from .filters import DailyReportFilter, OperatorBetFilter
from .pagination import StatementPagination
from .redaction import redact_secrets


def errors(*codes):
    """The documented error answers of an operation: 400, 401 and 429 and ``codes``."""
    return {code: ErrorSerializer for code in sorted({400, 401, 429, *codes})}


CODE_PARAMETER = OpenApiParameter("code", {"type": "string", "pattern": s.CODE_PATTERN, "maxLength": 64},
                                  OpenApiParameter.PATH, description="The player's code.")
TOKEN_PARAMETER = OpenApiParameter("token", {"type": "string", "minLength": 1, "maxLength": 200},
                                   OpenApiParameter.PATH, description="The session's token.")


class OperatorAPIView(StrictAPIView):
    """Base of the operator views: an operator's API key (``request.auth``; the operator is
    ``self.operator``), the per-key throttle, JSON bodies without repeated keys, and
    ``StrictAPIView``'s JSON, errors and strict query strings. Every answer to a request with a
    usable key, refusals included, writes one ``OperatorAPICall`` (``record_call``) of the path
    with its secrets redacted (``redaction.redact_secrets``)."""

    authentication_classes = [OperatorKeyAuthentication]
    permission_classes = [IsOperator]
    throttle_classes = [KeyThrottle]
    throttle_scope = "operator"

    @property
    def operator(self):
        return self.request.auth.operator

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        try:
            key = request.auth
        except drf.APIException:  # authentication failed: no usable key to name
            key = None
        if isinstance(key, OperatorAPIKey):
            record_call(key=key, method=request.method, path=redact_secrets(request.path),
                        status=response.status_code)
        return response


class PlayersView(OperatorAPIView):
    @extend_schema(request=s.PlayerRequestSerializer, responses={201: s.OperatorPlayerSerializer,
                                                                200: s.OperatorPlayerSerializer, **errors(409)},
                   examples=examples.UPSERT_PLAYER,
                   summary="Create a player (201) or update it (200) to the body: account kind, display name, "
                           "currencies")
    def post(self, request):
        player, created = upsert_player(operator=self.operator, has_open_bets=selectors.has_open_bets,
                                        **self.body(s.PlayerRequestSerializer))
        return Response(s.OperatorPlayerSerializer(player).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class PlayerView(OperatorAPIView):
    @extend_schema(parameters=[CODE_PARAMETER], responses={200: s.OperatorPlayerSerializer, **errors(404)},
                   examples=examples.PLAYER_DETAIL, summary="One of your players")
    def get(self, request, code):
        return Response(s.OperatorPlayerSerializer(player_of(self.operator, code)).data)


class BalanceView(OperatorAPIView):
    @extend_schema(parameters=[CODE_PARAMETER], responses={200: s.BalancesSerializer, **errors(404, 409)},
                   examples=examples.BALANCES,
                   summary="A player's wallet balances (transfer mode; a seamless operator holds its own)")
    def get(self, request, code):
        wallets = balances(self.operator, code)
        return Response(s.BalancesSerializer({"player": code, "balances": wallets}).data)


class SessionsView(OperatorAPIView):
    @extend_schema(request=s.SessionRequestSerializer, responses={201: s.SessionSerializer, **errors(404)},
                   examples=examples.OPEN_SESSION,
                   summary="Open a player API session for a player in one currency; the token is shown once")
    def post(self, request):
        session, token = open_session(operator=self.operator, **self.body(s.SessionRequestSerializer))
        return Response(s.SessionSerializer({"token": token, "expires_at": session.expires_at,
                                             "idle_timeout_seconds": settings.PLAYER_SESSION_IDLE_SECONDS}).data,
                        status=status.HTTP_201_CREATED)


class SessionEndView(OperatorAPIView):
    @extend_schema(request=s.SessionEndRequestSerializer, responses={204: None, **errors(404)},
                   examples=examples.REVOKE_SESSION,
                   summary="End a session now (idempotent), its token in the body; the player API refuses it at once")
    def post(self, request):
        revoke_session(operator=self.operator, **self.body(s.SessionEndRequestSerializer))
        return Response(status=status.HTTP_204_NO_CONTENT)


class SessionView(OperatorAPIView):
    @extend_schema(parameters=[TOKEN_PARAMETER], request=None, responses={204: None, **errors(404)},
                   examples=examples.REVOKE_SESSION,
                   summary="End a session now (idempotent), its token in the path (POST sessions/end keeps it "
                           "out of URLs); the player API refuses it at once")
    def delete(self, request, token):
        revoke_session(operator=self.operator, token=token)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TransfersView(OperatorAPIView):
    @extend_schema(request=s.TransferRequestSerializer, responses={201: s.TransferSerializer,
                                                                  200: s.TransferSerializer, **errors(404, 409)},
                   examples=examples.TRANSFERS,
                   summary="Move money into or out of a player's wallet (transfer mode), idempotent on transfer_id")
    def post(self, request):
        transaction, entry, created = transfer(operator=self.operator, **self.body(s.TransferRequestSerializer))
        return Response(s.TransferSerializer(s.transfer_row(transaction, entry)).data,
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class BetListView(BetList, OperatorAPIView):
    filterset_class = OperatorBetFilter
    #: The filters the rollups can answer (whole days of the operator's zone, table, variant, bet type, state).
    ROLLUP_FILTERS = {"date_from", "date_to", "tz", "table", "variant", "type", "state", "totals"}

    def bets(self):
        return selectors.bets_for_operator(self.operator)

    def totals(self, apply, filters):
        """From the rollups (``wagering.reports.rollup_totals``) when the filters are theirs and the
        days are the operator's (``tz`` its zone, or no dates), the open bets from the bets of the
        rounds still in play; otherwise from the bets (``BetList.totals``)."""
        used = {k for k, v in filters.items() if v not in (None, "")}
        dated = filters.get("date_from") or filters.get("date_to")
        if used - self.ROLLUP_FILTERS or dated and (filters.get("tz") or "UTC") != str(self.operator.time_zone):
            return super().totals(apply, filters)
        selection = Selection(day_from=filters.get("date_from"), day_to=filters.get("date_to"),
                              table=filters.get("table") or None, scope=self.operator.pk)
        return rollup_totals(selection, variant=filters.get("variant") or None, bet_type=filters.get("type") or None,
                             state=filters.get("state") or None,
                             open_totals=selectors.bet_totals(selectors.open_bets(apply(self.bets()))))

    def get_queryset(self):
        return selectors.bet_rows_for_operator(self.operator)

    def row(self, row, zone):
        return s.operator_bet_row(row, zone)

    @extend_schema(responses={200: s.OperatorBetSerializer(many=True), **errors()}, examples=examples.BETS,
                   summary="Your players' bets, newest first, as the player API lists them, and by player")
    def get(self, request):
        return self.list_bets()


class RoundView(OperatorAPIView):
    @extend_schema(parameters=[ID_PARAMETER], responses={200: s.OperatorRoundSerializer, **errors(404)},
                   examples=examples.ROUND,
                   summary="A round your players had bets in: its public cards and result, and their bets")
    def get(self, request, id):  # noqa: A002 (the path's {id})
        round_ = self.owned(selectors.rounds_for_operator(self.operator), id, "round")
        round_.result = round_public(round_)
        round_.bets_of_operator = selectors.bets_for_operator(self.operator).filter(round=round_)
        return Response(s.OperatorRoundSerializer(round_).data)


class StatementView(OperatorAPIView):
    pagination_class = StatementPagination
    queryset = LedgerEntry.objects.none()

    def get_queryset(self):
        return statement_entries(self.operator)

    @extend_schema(responses={200: s.StatementEntrySerializer(many=True), **errors()}, examples=examples.STATEMENT,
                   summary="Your statement: every entry on your players' wallets, oldest first, after the cursor")
    def get(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(s.StatementEntrySerializer(page, many=True).data)


class DailyReportView(OperatorAPIView):
    filterset_class = DailyReportFilter
    queryset = DailyRollup.objects.none()  # the model, for the filter set

    @extend_schema(parameters=[
        OpenApiParameter("date_from", {"type": "string", "format": "date"},
                         description="First day (YYYY-MM-DD) in your zone; default 29 days before date_to."),
        OpenApiParameter("date_to", {"type": "string", "format": "date"},
                         description="Last day (YYYY-MM-DD), inclusive; default today in your zone."),
        OpenApiParameter("currency", {"type": "string", "pattern": "^[A-Z]{1,8}$"}, description="Currency code."),
        OpenApiParameter("table", {"type": "string", "minLength": 1, "maxLength": 32, "pattern": r"^[^\x00]*$"},
                         description="Table code.")], responses={200: s.DailyReportSerializer, **errors()},
                   examples=examples.DAILY_REPORT,
                   summary="Your daily report: per day (in your zone) and currency, rounds, bets, players, turnover, "
                           "returned, GGR and hold, refunds and adjustments, from the rollups")
    def get(self, request):
        _, filters = self.filters()
        day_to = filters.get("date_to") or timezone.localtime(timezone.now(), self.operator.time_zone).date()
        day_from = filters.get("date_from") or default_first_day(day_to)
        selection = Selection(day_from=day_from, day_to=day_to, currency=filters.get("currency") or None,
                              table=filters.get("table") or None, scope=self.operator.pk)
        days, totals = report(selection, "day")
        currencies = Currency.objects.in_bulk({r.currency for r in days + totals})
        for row in days + totals:
            row.currency_obj = currencies[row.currency]
        return Response(s.DailyReportSerializer({"days": days, "totals": totals}).data)
