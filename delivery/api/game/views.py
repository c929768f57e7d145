"""Game-server REST views (``/api/game/v1/``): thin wrappers over the round, bet and settlement
services, one service call each. Errors: see ``delivery.api.common``."""

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework import status
from rest_framework.response import Response

from delivery.api.common import error_body
from settlement.results import record_result
from settlement.voids import cancel
from tables.exceptions import InvalidInput, NotFound
from tables.models import Round
from tables.services import open_round, report_play, resume, suspend
from wagering.closing import close_betting
from wagering.extras import add_extra_stake, add_extra_stakes
from wagering.placement import place_bet, place_bets
from wagering.validation import MAX_BATCH

from . import serializers as s
from .auth import GameAPIView

ERRORS = {code: s.ErrorSerializer for code in (400, 403, 404, 409)}


def _valid(serializer_class, data):
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _batch(items, name):
    """``items`` (a batch's list), or ``InvalidInput`` when it holds more than ``MAX_BATCH``."""
    if len(items) > MAX_BATCH:
        raise InvalidInput(f"{name}: at most {MAX_BATCH} items per request, not {len(items)}")
    return items


def _round(round_):
    return Response(s.RoundSerializer(Round.objects.select_related("table", "shoe").get(pk=round_.pk)).data)


class OpenRoundView(GameAPIView):
    @extend_schema(request=s.OpenRoundSerializer, responses={201: s.RoundSerializer, **ERRORS},
                   summary="Open betting on a new round (idempotent on external_id)")
    def post(self, request, code):
        round_ = open_round(table_code=code, **_valid(s.OpenRoundSerializer, request.data), **self.actor())
        response = _round(round_)
        response.status_code = status.HTTP_201_CREATED
        return response


class RoundView(GameAPIView):
    @extend_schema(responses={200: s.RoundDetailSerializer, **ERRORS}, summary="A round and its timeline")
    def get(self, request, pk):
        round_ = Round.objects.select_related("table", "shoe").prefetch_related("events").filter(pk=pk).first()
        if round_ is None:
            raise NotFound(f"no round {pk}")
        return Response(s.RoundDetailSerializer(round_).data)


def _outcome(outcome):
    return {"index": outcome.index, "created": outcome.created,
            "bets": s.BetSerializer(outcome.bets, many=True).data,
            "error": error_body(outcome.error) if outcome.error else None}


class BetsView(GameAPIView):
    @extend_schema(
        request=PolymorphicProxySerializer(component_name="BetOrBatch", resource_type_field_name=None,
                                           serializers=[s.BetRequestSerializer, s.BetBatchSerializer]),
        responses={201: PolymorphicProxySerializer(component_name="BetOutcomeOrBatch", resource_type_field_name=None,
                                                   serializers=[s.BetOutcomeSerializer, s.BetBatchResultSerializer]),
                   **ERRORS},
        summary="Place one bet (an object) or many ({\"bets\": [...]}, one result each); stakes debited at once")
    def post(self, request, pk):
        data = request.data
        if isinstance(data, dict) and isinstance(data.get("bets"), list):
            outcomes = place_bets(round_id=pk, bets=_batch(data["bets"], "bets"), amounts_as_strings=True,
                                           **self.actor())
            return Response({"results": [_outcome(o) for o in outcomes]}, status=status.HTTP_201_CREATED)
        if not isinstance(data, dict):
            data = {}
        fields = ("key", "player", "type", "stake", "seat", "record_id")
        outcome = place_bet(round_id=pk, **{f: data.get(f) for f in fields}, amounts_as_strings=True,
                                     **self.actor())
        return Response(_outcome(outcome), status=status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK)


class CloseView(GameAPIView):
    @extend_schema(request=None, responses={200: s.RoundSerializer, **ERRORS}, summary="Close betting")
    def post(self, request, pk):
        return _round(close_betting(round_id=pk, **self.actor()))


def _extra_outcome(outcome):
    return {"applied": outcome.applied, "action": outcome.action,
            "extra": s.BetExtraSerializer(outcome.extra).data if outcome.extra else None,
            "error": error_body(outcome.error) if outcome.error else None}


class ExtrasView(GameAPIView):
    @extend_schema(
        request=PolymorphicProxySerializer(component_name="ExtraOrBatch", resource_type_field_name=None,
                                           serializers=[s.ExtraRequestSerializer, s.ExtraBatchSerializer]),
        responses={200: PolymorphicProxySerializer(component_name="ExtraOutcomeOrBatch", resource_type_field_name=None,
                                                   serializers=[s.ExtraOutcomeSerializer,
                                                                s.ExtraBatchResultSerializer]),
                   **ERRORS},
        summary="Double, split, insurance, follow double / split: one (an object) or many ({\"extras\": [...]}, "
                "one result each); returns what to apply (fallback)")
    def post(self, request, pk):
        data = request.data
        if isinstance(data, dict) and isinstance(data.get("extras"), list):
            outcomes = add_extra_stakes(round_id=pk, extras=_batch(data["extras"], "extras"), **self.actor())
            return Response({"results": [_extra_outcome(o) for o in outcomes]})
        outcome = add_extra_stake(round_id=pk, **_valid(s.ExtraRequestSerializer, data), **self.actor())
        return Response(_extra_outcome(outcome))


class PlayEventsView(GameAPIView):
    @extend_schema(request=s.PlayEventsSerializer, responses={201: s.RoundEventSerializer(many=True), **ERRORS},
                   summary="Report card scans, rescans, decisions and auto-play for the round's timeline")
    def post(self, request, pk):
        rows = report_play(round_id=pk, **_valid(s.PlayEventsSerializer, request.data), **self.actor())
        return Response(s.RoundEventSerializer(rows, many=True).data, status=status.HTTP_201_CREATED)


class ResultView(GameAPIView):
    @extend_schema(request=s.ResultRequestSerializer, responses={200: s.RoundSerializer, **ERRORS},
                   summary="Report the round record: validated against the bets, stored, settled after")
    def post(self, request, pk):
        return _round(record_result(round_id=pk, **_valid(s.ResultRequestSerializer, request.data),
                                           **self.actor()))


class SuspendView(GameAPIView):
    @extend_schema(request=s.ReasonSerializer, responses={200: s.RoundSerializer, **ERRORS}, summary="Suspend")
    def post(self, request, pk):
        return _round(suspend(round_id=pk, **_valid(s.ReasonSerializer, request.data), **self.actor()))


class ResumeView(GameAPIView):
    @extend_schema(request=None, responses={200: s.RoundSerializer, **ERRORS}, summary="Resume a suspended round")
    def post(self, request, pk):
        return _round(resume(round_id=pk, **self.actor()))


class CancelView(GameAPIView):
    @extend_schema(request=s.CancelSerializer, responses={200: s.RoundSerializer, **ERRORS},
                   summary="Cancel: the round is voided, every stake refunded")
    def post(self, request, pk):
        return _round(cancel(round_id=pk, **_valid(s.CancelSerializer, request.data), **self.actor()))
