"""Player API views (``/api/v1/``): thin wrappers over the selectors (``wagering.selectors``,
``accounts.selectors``, ``settlement.selectors``) and settlement's dispute service
(``settlement.disputes.open_dispute``). Only the calling player's own data, ever: another
player's bet, round or dispute answers 404, exactly like one that does not exist.

Errors are ``{"code": ..., "detail": ...}`` (``delivery.api.common.exception_handler``): 400
``invalid_input`` (bad filter values, unknown query parameters, NUL bytes, bad cursor or page
size, bad body), 401 ``not_authenticated`` / ``authentication_failed``, 403 ``permission_denied``
(a user without a player: game-server accounts, operators), 404 ``not_found``, 429 ``throttled``.
"""

from zoneinfo import ZoneInfo

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db.models import Prefetch
from django.http import Http404
from django.utils import timezone
from django_filters.rest_framework import DjangoFilterBackend
from django_filters.utils import translate_validation
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions as drf
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from accounts.models import LedgerEntry
from accounts.selectors import LEDGER_ROW, ledger_entries_for_player, wallets_of
from accounts.sql import values_rows
from delivery.api.common import ErrorSerializer, SafeJSONParser
from delivery.api.common import exception_handler as game_exception_handler
from settlement.disputes import open_dispute
from settlement.models import Dispute
from settlement.selectors import bet_ledger_rows, bet_replay, round_public
from wagering import selectors
from wagering.models import Bet

from . import serializers as s
from .authentication import CachedTokenAuthentication
from .filters import BetFilter
from .pagination import MAX_ID, KeysetPagination
from .throttles import PlayerRateThrottle

ERRORS = {code: ErrorSerializer for code in (400, 401, 403, 404, 429)}
ID_PARAMETER = OpenApiParameter("id", {"type": "integer", "format": "int64", "minimum": 1, "maximum": MAX_ID},
                                OpenApiParameter.PATH)


def exception_handler(exc, context):
    """The game-server API's error format, with Django's 404 / 403 given DRF's codes."""
    if isinstance(exc, Http404):
        exc = drf.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = drf.PermissionDenied()
    return game_exception_handler(exc, context)


class IsPlayer(BasePermission):
    """An authenticated user who is a player (has a ``Player``)."""

    message = "Only players may call this API."

    def has_permission(self, request, view):
        return hasattr(request.user, "player")


class BetPagination(KeysetPagination):
    """Bets newest first by ``(placed_at, id)``, 20 a page by default; the page also carries
    ``totals`` (set by the view: null unless ``totals=true``)."""

    ordering = ("placed_at", "id")
    page_size = 20
    fetch = staticmethod(values_rows)  # a prepared statement on PostgreSQL: planned once per shape

    def get_paginated_response_schema(self, schema):
        page = super().get_paginated_response_schema(schema)
        amount = s.AMOUNT_SCHEMA
        page["required"].append("totals")
        page["properties"]["totals"] = {
            "type": "array", "nullable": True,
            "description": "With `totals=true`: per currency, over every bet the filters select (all pages); "
                           "otherwise null.",
            "items": {"type": "object", "required": ["currency", "count", "staked", "returned", "net"],
                      "properties": {"currency": {"type": "string"}, "count": {"type": "integer"},
                                     "staked": amount, "returned": amount, "net": amount}}}
        return page


class PlayerAPIView(GenericAPIView):
    """Base of the player views: a player's token (looked up once in a few seconds), the per-player
    throttle, the error format, JSON in and out, and strict query strings: only the filter's and
    the paginator's parameters, none empty, no NUL byte (400 otherwise)."""

    authentication_classes = [CachedTokenAuthentication]
    permission_classes = [IsAuthenticated, IsPlayer]
    throttle_classes = [PlayerRateThrottle]
    renderer_classes = [JSONRenderer]
    parser_classes = [SafeJSONParser]
    metadata_class = None  # OPTIONS: 405
    filter_backends = []
    pagination_class = None

    def get_exception_handler(self):
        return exception_handler

    @property
    def player(self):
        return self.request.user.player

    def perform_content_negotiation(self, request, force=False):
        return super().perform_content_negotiation(request, force=True)  # JSON, even for ?format=

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if not hasattr(self, request.method.lower()):
            return  # 405 follows
        allowed = set(getattr(getattr(self, "filterset_class", None), "base_filters", ()))
        if self.pagination_class:
            allowed.update(self.paginator.query_params)
        unknown = sorted(set(request.query_params) - allowed)
        if unknown:
            raise drf.ValidationError(f"unknown query parameter(s): {', '.join(unknown)[:200]}")
        values = [(key, value) for key, values in request.query_params.lists() for value in values]
        if any("\x00" in key or "\x00" in value for key, value in values):
            raise drf.ValidationError("query parameters must not contain NUL bytes")
        empty = sorted({key for key, value in values if not value})
        if empty:
            raise drf.ValidationError(f"empty query parameter(s): {', '.join(empty)}")

    def filters(self):
        """``(apply, cleaned filter values)`` of the request by ``filterset_class``: ``apply(queryset)``
        filters any queryset of its model so; ``ValidationError`` (400). Without any filter parameter
        (``initial`` let only known ones through) ``apply`` changes nothing."""
        if not self.filterset_class.base_filters.keys() & self.request.query_params.keys():
            return (lambda queryset: queryset), {}
        filterset = DjangoFilterBackend().get_filterset(self.request, self.queryset, self)  # the model's none()
        if not filterset.is_valid():
            raise translate_validation(filterset.errors)
        cleaned = filterset.form.cleaned_data
        if cleaned.get("date_from") and cleaned.get("date_to") and cleaned["date_from"] > cleaned["date_to"]:
            raise drf.ValidationError("date_from must not be after date_to")
        return filterset.filter_queryset, cleaned

    def owned(self, queryset, pk):
        """The row ``pk`` (a path string) of ``queryset`` (already limited to the player's own rows);
        ``NotFound`` when it is not a positive id or not there."""
        return found_or_404(queryset.filter(pk=path_id(pk)).first())


def path_id(pk):
    """The id ``pk`` (a path string) as an int; ``NotFound`` when it is not a positive id."""
    if not pk.isascii() or not pk.isdigit() or not 1 <= int(pk) <= MAX_ID:
        raise drf.NotFound()
    return int(pk)


def found_or_404(found):
    """``found``, unless None (``NotFound``)."""
    if found is None:
        raise drf.NotFound()
    return found


class MeView(PlayerAPIView):
    @extend_schema(responses={200: s.MeSerializer, **ERRORS}, summary="Your account and wallets")
    def get(self, request):
        player = self.player
        return Response(s.MeSerializer({"code": player.code, "account_kind": player.account_kind,
                                        "wallets": wallets_of(player)}).data)


class BetListView(PlayerAPIView):
    filter_backends = [DjangoFilterBackend]
    filterset_class = BetFilter
    pagination_class = BetPagination
    queryset = Bet.objects.none()  # the model, for the schema and the cursor; rows: get_queryset

    def get_queryset(self):
        return selectors.bet_rows_for_player(self.player)

    @extend_schema(responses={200: s.PlayerBetSerializer(many=True), **ERRORS},
                   summary="Your bets, newest first; with totals=true, the totals of the filtered range")
    def get(self, request):
        apply, filters = self.filters()
        zone = ZoneInfo(filters.get("tz") or "UTC")
        if filters:
            rows = self.paginate_queryset(apply(self.get_queryset()))
        else:  # the one shape of the unfiltered list: compiled once
            rows = self.paginator.paginate_shaped(request, ("bets",), selectors.bet_rows_for_player, [self.player.pk])
        page = [s.bet_row(row, zone) for row in rows]
        # Totals from the bets themselves: the rows' joins (round, table, currency) would slow their scan.
        totals = (s.TotalsSerializer(selectors.bet_totals(apply(selectors.bets_for_player(self.player))),
                                     many=True).data
                  if filters.get("totals") else None)
        response = self.get_paginated_response(page)
        response.data["totals"] = totals
        return response


class BetDetailView(PlayerAPIView):
    @extend_schema(parameters=[ID_PARAMETER], responses={200: s.PlayerBetDetailSerializer, **ERRORS},
                   summary="One of your bets as the Bet Record shows it")
    def get(self, request, id):  # noqa: A002 (the path's {id})
        bet = found_or_404(selectors.bet_detail_row(self.player, path_id(id)))
        extras = selectors.extras_of(bet)
        return Response(s.bet_detail(bet, extras, bet_replay(bet), bet_ledger_rows(bet, extras),
                                     timezone.get_current_timezone()))


class RoundDetailView(PlayerAPIView):
    @extend_schema(parameters=[ID_PARAMETER], responses={200: s.PlayerRoundDetailSerializer, **ERRORS},
                   summary="A round you had a bet in: its public cards and result, and your bets")
    def get(self, request, id):  # noqa: A002 (the path's {id})
        round_ = self.owned(selectors.rounds_for_player(self.player), id)
        round_.result = round_public(round_)
        round_.bets_of_player = selectors.bets_for_player(self.player).filter(round=round_)
        return Response(s.PlayerRoundDetailSerializer(round_).data)


class LedgerView(PlayerAPIView):
    pagination_class = KeysetPagination
    queryset = LedgerEntry.objects.none()

    def get_queryset(self):
        return ledger_entries_for_player(self.player).values(*LEDGER_ROW)

    @extend_schema(responses={200: s.LedgerEntrySerializer(many=True), **ERRORS},
                   summary="Your wallets' ledger entries, newest first")
    def get(self, request):
        zone = timezone.get_current_timezone()
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response([s.ledger_entry(entry, zone) for entry in page])


def disputes_of(player):
    """``player``'s disputes with their bets (in id order) and currency."""
    return (Dispute.objects.filter(player=player).select_related("currency")
            .prefetch_related(Prefetch("bets", queryset=Bet.objects.order_by("pk"))))


class DisputeListView(PlayerAPIView):
    pagination_class = KeysetPagination
    queryset = Dispute.objects.none()

    def get_queryset(self):
        return disputes_of(self.player)

    @extend_schema(responses={200: s.DisputeSerializer(many=True), **ERRORS}, summary="Your disputes, newest first")
    def get(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(s.DisputeSerializer(page, many=True).data)

    @extend_schema(request=s.DisputeRequestSerializer, responses={201: s.DisputeSerializer, **ERRORS,
                                                                 409: ErrorSerializer},
                   summary="Dispute some of your bets; operators answer in the back office")
    def post(self, request):
        body = s.DisputeRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        ids = set(body.validated_data["bets"])
        own = set(Bet.objects.filter(player=self.player, pk__in=ids).values_list("pk", flat=True))
        if own != ids:
            raise drf.NotFound(f"no bet {min(ids - own)}")
        dispute = open_dispute(player=self.player, bets=sorted(own), reason=body.validated_data["reason"])
        return Response(s.DisputeSerializer(self.get_queryset().get(pk=dispute.pk)).data,
                        status=status.HTTP_201_CREATED)


class DisputeDetailView(PlayerAPIView):
    @extend_schema(parameters=[ID_PARAMETER], responses={200: s.DisputeSerializer, **ERRORS},
                   summary="One of your disputes")
    def get(self, request, id):  # noqa: A002 (the path's {id})
        return Response(s.DisputeSerializer(self.owned(disputes_of(self.player), id)).data)
