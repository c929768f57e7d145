"""Player API views (``/api/v1/``): thin wrappers over the selectors (``wagering.selectors``,
``accounts.selectors``, ``settlement.selectors``), settlement's dispute service
(``settlement.disputes.open_dispute``) and a seamless player's balances as the operator's wallet
answers them (``wallets.balances``). Only the calling player's own data, ever: another
player's bet, round or dispute answers 404, exactly like one that does not exist. The bet list,
a bet's detail and the ledger show their times in the time zone ``tz`` (default UTC).

Errors are ``{"code": ..., "detail": ...}`` (``delivery.api.base``): 400 ``invalid_input`` (bad
filter values, unknown or repeated query parameters, NUL bytes, bad cursor or page size, bad body),
401 ``not_authenticated`` / ``authentication_failed`` (also an ended session), 403
``permission_denied`` (a user without a player: game-server accounts, operators), 404
``not_found``, 429 ``throttled``.
"""

from zoneinfo import ZoneInfo

from django.db.models import Prefetch
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions as drf
from rest_framework import status
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.response import Response

from accounts.models import LedgerEntry
from accounts.selectors import LEDGER_ROW, ledger_entries_for_player, wallets_of
from delivery.api.base import ID_PARAMETER, StrictAPIView, found_or_404, path_id
from delivery.api.common import ErrorSerializer
from delivery.api.throttles import MeRateThrottle, PlayerRateThrottle
from settlement.disputes import open_dispute
from settlement.models import Dispute
from settlement.replay import visible_steps
from settlement.selectors import bet_ledger_rows, bet_replay, round_public
from wagering import selectors
from wagering.models import Bet
from wallets.balances import with_operator_balances

from . import serializers as s
from .authentication import CachedTokenAuthentication, PlayerSessionAuthentication
from .bet_list import BetList
from .filters import TZ_PARAMETER, ZoneFilter
from .pagination import KeysetPagination

ERRORS = {code: ErrorSerializer for code in (400, 401, 403, 404, 429)}
#: How many rounds ``rounds/recent`` recalls.
RECENT_ROUNDS = 10


class IsPlayer(BasePermission):
    """An authenticated user who is a player (has a ``Player``)."""

    message = "Only players may call this API."

    def has_permission(self, request, view):
        return hasattr(request.user, "player")


class PlayerAPIView(StrictAPIView):
    """Base of the player views: a player's session or token (each looked up once in a few
    seconds), the per-player throttle, and ``StrictAPIView``'s JSON, errors and strict query
    strings."""

    authentication_classes = [CachedTokenAuthentication, PlayerSessionAuthentication]
    permission_classes = [IsAuthenticated, IsPlayer]
    throttle_classes = [PlayerRateThrottle]

    @property
    def player(self):
        return self.request.user.player


class MeView(PlayerAPIView):
    throttle_classes = [PlayerRateThrottle, MeRateThrottle]

    @extend_schema(responses={200: s.MeSerializer, **ERRORS}, summary="Your account and wallets",
                   description="A seamless operator's player's balances are asked of the operator's wallet "
                               "(balance_source: operator; each answer kept a few seconds), null when it does "
                               "not answer in time. Throttled per player more tightly than the other calls.")
    def get(self, request):
        player = self.player
        wallets = with_operator_balances(list(wallets_of(player).select_related("operator", "player")))
        return Response(s.MeSerializer({"code": player.code, "account_kind": player.account_kind,
                                        "wallets": wallets}).data)


class BetListView(BetList, PlayerAPIView):
    def bets(self):
        return selectors.bets_for_player(self.player)

    def get_queryset(self):
        return selectors.bet_rows_for_player(self.player)

    def unfiltered_page(self):
        return self.paginator.paginate_shaped(self.request, ("bets",), selectors.bet_rows_for_player,
                                              [self.player.pk])

    @extend_schema(responses={200: s.PlayerBetSerializer(many=True), **ERRORS},
                   summary="Your bets, newest first; with totals=true, the totals of the filtered range")
    def get(self, request):
        return self.list_bets()


class ZonedView(PlayerAPIView):
    """A player view whose answer shows its times in the time zone ``tz`` (``ZoneFilter``: an IANA
    name, default UTC; an unknown one is 400 ``invalid_input``)."""

    filterset_class = ZoneFilter

    def zone(self):
        """The requested time zone (a ``ZoneInfo``)."""
        _, cleaned = self.filters()
        return ZoneInfo(cleaned.get("tz") or "UTC")


class BetDetailView(ZonedView):
    queryset = Bet.objects.none()

    @extend_schema(parameters=[ID_PARAMETER, TZ_PARAMETER], responses={200: s.PlayerBetDetailSerializer, **ERRORS},
                   summary="One of your bets as the Bet Record shows it")
    def get(self, request, id):  # noqa: A002 (the path's {id})
        bet = found_or_404(selectors.bet_detail_row(self.player, path_id(id, "bet")), "bet", id)
        extras = selectors.extras_of(bet)
        return Response(s.bet_detail(bet, extras, bet_replay(bet), bet_ledger_rows(bet, extras), self.zone()))


class RoundDetailView(PlayerAPIView):
    @extend_schema(parameters=[ID_PARAMETER], responses={200: s.PlayerRoundDetailSerializer, **ERRORS},
                   summary="A round you had a bet in: its public cards and result, and your bets")
    def get(self, request, id):  # noqa: A002 (the path's {id})
        round_ = self.owned(selectors.rounds_for_player(self.player), id, "round")
        round_.result = round_public(round_)
        round_.bets_of_player = selectors.bets_for_player(self.player).filter(round=round_)
        return Response(s.PlayerRoundDetailSerializer(round_).data)


class RecentRoundsView(PlayerAPIView):
    @extend_schema(responses={200: s.RecentRoundSerializer(many=True), **ERRORS},
                   summary="Your last rounds (newest first) with every step: last-game recall")
    def get(self, request):
        rounds = list(selectors.rounds_for_player(self.player).order_by("-opened_at", "-id")[:RECENT_ROUNDS])
        bets = selectors.bets_for_player(self.player).filter(round__in=rounds)
        for round_ in rounds:
            round_.result = round_public(round_)
            round_.bets_of_player = [b for b in bets if b.round_id == round_.pk]
            round_.steps = [{"at": e.created_at, "kind": e.kind, "detail": payload} for e, payload in
                            visible_steps(round_, {b.record_id for b in round_.bets_of_player})]
        return Response(s.RecentRoundSerializer(rounds, many=True).data)


class LedgerView(ZonedView):
    pagination_class = KeysetPagination
    queryset = LedgerEntry.objects.none()

    def get_queryset(self):
        return ledger_entries_for_player(self.player).values(*LEDGER_ROW)

    @extend_schema(parameters=[TZ_PARAMETER], responses={200: s.LedgerEntrySerializer(many=True), **ERRORS},
                   summary="Your wallets' ledger entries, newest first")
    def get(self, request):
        zone = self.zone()
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
        body = self.body(s.DisputeRequestSerializer)
        ids = set(body["bets"])
        own = set(Bet.objects.filter(player=self.player, pk__in=ids).values_list("pk", flat=True))
        if own != ids:
            raise drf.NotFound(f"no bet {min(ids - own)}")
        dispute = open_dispute(player=self.player, bets=sorted(own), reason=body["reason"])
        return Response(s.DisputeSerializer(self.get_queryset().get(pk=dispute.pk)).data,
                        status=status.HTTP_201_CREATED)


class DisputeDetailView(PlayerAPIView):
    @extend_schema(parameters=[ID_PARAMETER], responses={200: s.DisputeSerializer, **ERRORS},
                   summary="One of your disputes")
    def get(self, request, id):  # noqa: A002 (the path's {id})
        return Response(s.DisputeSerializer(self.owned(disputes_of(self.player), id, "dispute")).data)
