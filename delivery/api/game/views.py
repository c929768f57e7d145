"""Game-server REST views (``/api/game/v1/``): thin wrappers over the round, bet and settlement
services, one service call each, on the caller's studio's tables only (another studio's table or
round is answered 404 as one that does not exist). Errors: see ``delivery.api.common``.

A batch (``{"bets": [...]}``, ``{"extras": [...]}``) answers one result per item, in order, with
a status that sums them up: every item accepted: 201 for bets when one was new (200 when all were
replays), 200 for extra stakes; some accepted and some rejected: 207; none accepted: 422 with
``{"code": "none_accepted", "detail", "results"}``."""

from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework import status
from rest_framework.response import Response

from settlement.results import record_result
from settlement.voids import cancel
from tables.exceptions import InvalidInput, NotFound
from tables.models import Round
from tables.services import open_round, report_play, resume, suspend
from tables.studios import studio_table
from tables.validation import unknown_keys
from wagering.closing import close_betting
from wagering.extras import add_extra_stake, add_extra_stakes
from wagering.models import Bet
from wagering.placement import place_bet, place_bets
from wagering.validation import MAX_BATCH

from . import serializers as s
from .auth import GameAPIView
from .errors import game_error_body

ERRORS = {code: s.ErrorSerializer for code in (400, 401, 403, 404, 409, 429)}
MULTI_STATUS, NONE_ACCEPTED = 207, 422


def _json_kind(value):
    """What JSON value ``value`` is, for a sentence: "null", "an array", "a string"..."""
    kinds = ((type(None), "null"), (bool, "a boolean"), (list, "an array"), (str, "a string"), (dict, "an object"))
    return next((kind for cls, kind in kinds if isinstance(value, cls)), "a number")


def _object(data, shape):
    """``data`` (a request body), or ``InvalidInput`` saying it must be a JSON object ``shape``."""
    if not isinstance(data, dict):
        raise InvalidInput(f"the body must be a JSON object: {shape}, not {_json_kind(data)}")
    return data


def _batch_shape(name, item, items):
    """The sentence of a call's shapes: one ``item`` alone, or the ``name`` batch of ``items``."""
    return f'one {item}, or {{"{name}": [...]}} with a list of 1 to {MAX_BATCH} {items}'


def _valid(serializer_class, data, shape=None):
    """``data`` validated by ``serializer_class``; a body that is no object is told ``shape`` (by
    default the serializer's fields, ``{"reason", ...}``)."""
    if not isinstance(data, dict):
        _object(data, shape or "{" + ", ".join(f'"{name}"' for name in serializer_class().fields) + "}")
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _known_keys(data, fields):
    """``data`` (a request body, an object), or ``InvalidInput`` naming the keys it holds beyond
    ``fields`` (as a ``StrictSerializer`` body)."""
    unknown = unknown_keys(data, fields)
    if unknown:
        raise InvalidInput("; ".join(f"{key}: unknown field" for key in unknown))
    return data


def _batch(data, name, what):
    """The ``name`` list of ``data`` (a batch's body, its one key; ``what``: what it lists, for a
    sentence), or ``InvalidInput`` when it is no list, is empty or holds more than ``MAX_BATCH``."""
    items = _known_keys(data, [name])[name]
    if not isinstance(items, list):
        raise InvalidInput(f"{name}: a list of 1 to {MAX_BATCH} {what} is required, not {_json_kind(items)}")
    if not items:
        raise InvalidInput(f"{name}: at least one item is required")
    if len(items) > MAX_BATCH:
        raise InvalidInput(f"{name}: at most {MAX_BATCH} items per request, not {len(items)}")
    return items


def _batch_response(results, all_ok_status):
    """The answer to a batch: ``{"results"}`` with ``all_ok_status`` when no item was rejected,
    207 when some were, 422 (and ``code``/``detail``) when all were."""
    rejected = sum(1 for r in results if r["error"] is not None)
    if rejected and rejected == len(results):
        return Response({"code": "none_accepted", "detail": f"none of the {rejected} items was accepted",
                         "results": results}, status=NONE_ACCEPTED)
    return Response({"results": results}, status=MULTI_STATUS if rejected else all_ok_status)


def _loaded(round_id):
    return Round.objects.select_related("table__currency", "shoe").get(pk=round_id)


def _round(round_, serializer_class=s.RoundSerializer):
    return Response(serializer_class(round_).data)


def _money(round_):
    return {"minor_units": round_.table.currency.minor_units}


ROUND_STATUS = {201: s.RoundSerializer, 200: s.RoundSerializer, **ERRORS}


class TablesView(GameAPIView):
    @extend_schema(responses={200: s.TableSerializer(many=True), **ERRORS},
                   summary="Your studio's tables, with their limits per bet type")
    def get(self, request):
        tables = self.studio.tables.select_related("currency").prefetch_related("limits").order_by("code")
        return Response(s.TableSerializer(tables, many=True).data)


class OpenRoundView(GameAPIView):
    query_parameters = frozenset({"external_id"})

    @extend_schema(parameters=[OpenApiParameter("external_id", str, required=True,
                                                description="The game server's round id.")],
                   responses={200: s.RoundSerializer, **ERRORS}, summary="Find a round of the table by its external id")
    def get(self, request, code):
        external_id = request.query_params.get("external_id")
        if not external_id:
            raise InvalidInput("external_id: the query parameter is required")
        round_ = Round.objects.select_related("table", "shoe").filter(
            table=studio_table(self.studio, code), external_id=external_id).first()
        if round_ is None:
            raise NotFound(f"no round {external_id[:64]!r} at table {code}")
        return _round(round_)

    @extend_schema(request=s.OpenRoundSerializer, responses=ROUND_STATUS,
                   summary="Open betting on a new round (idempotent on external_id: 200 for the round already opened)")
    def post(self, request, code):
        table = studio_table(self.studio, code)
        body = _valid(s.OpenRoundSerializer, request.data)
        round_ = open_round(table_code=table.code, **body, **self.actor())
        return Response(s.RoundSerializer(_loaded(round_.pk)).data,
                        status=status.HTTP_201_CREATED if round_.created else status.HTTP_200_OK)


class RoundView(GameAPIView):
    @extend_schema(responses={200: s.RoundDetailSerializer, **ERRORS}, summary="A round and its timeline")
    def get(self, request, pk):
        self.own_round(pk)
        round_ = Round.objects.select_related("table", "shoe").prefetch_related("events").get(pk=pk)
        return Response(s.RoundDetailSerializer(round_).data)


def _outcome(outcome, context):
    return {"index": outcome.index, "created": outcome.created,
            "bets": s.BetSerializer(outcome.bets, many=True, context=context).data,
            "error": game_error_body(outcome.error) if outcome.error else None}


class BetsView(GameAPIView):
    @extend_schema(responses={200: s.RoundBetsSerializer, **ERRORS},
                   summary="The round's bets, with their extra stakes and, once settled, their results")
    def get(self, request, pk):
        round_ = _loaded(self.own_round(pk))
        bets = Bet.objects.filter(round=round_).select_related("player").prefetch_related("extras").order_by("pk")
        return Response({"round": s.RoundSerializer(round_).data,
                         "bets": s.RoundBetSerializer(bets, many=True, context=_money(round_)).data})

    @extend_schema(
        request=PolymorphicProxySerializer(component_name="BetOrBatch", resource_type_field_name=None,
                                           serializers=[s.BetRequestSerializer, s.BetBatchSerializer]),
        responses={(code, "application/json"): PolymorphicProxySerializer(
            component_name="BetOutcomeOrBatch", resource_type_field_name=None,
            serializers=[s.BetOutcomeSerializer, s.BetBatchResultSerializer]) for code in (200, 201)}
        | {(MULTI_STATUS, "application/json"): s.BetBatchResultSerializer,
           (NONE_ACCEPTED, "application/json"): s.BetBatchResultSerializer}
        | {(code, "application/json"): body for code, body in ERRORS.items()},
        summary="Place one bet (an object) or many ({\"bets\": [...]}, one result each); stakes debited at once")
    def post(self, request, pk):
        round_ = _loaded(self.own_round(pk))
        data = _object(request.data, _batch_shape("bets", "bet", "bets"))
        if "bets" in data:
            outcomes = place_bets(round_id=pk, bets=_batch(data, "bets", "bets"), amounts_as_strings=True,
                                  **self.actor())
            results = [_outcome(o, _money(round_)) for o in outcomes]
            return _batch_response(results, status.HTTP_201_CREATED if any(o.created for o in outcomes)
                                   else status.HTTP_200_OK)
        fields = ("key", "player", "type", "stake", "seat", "record_id")
        outcome = place_bet(round_id=pk, **{f: _known_keys(data, fields).get(f) for f in fields},
                            amounts_as_strings=True,
                            **self.actor())
        return Response(_outcome(outcome, _money(round_)),
                        status=status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK)


class CloseView(GameAPIView):
    @extend_schema(request=None, responses={200: s.RoundSerializer, **ERRORS}, summary="Close betting")
    def post(self, request, pk):
        return _round(close_betting(round_id=self.own_round(pk), **self.actor()))


def _extra_outcome(outcome, context):
    return {"applied": outcome.applied, "action": outcome.action,
            "extra": s.BetExtraSerializer(outcome.extra, context=context).data if outcome.extra else None,
            "error": game_error_body(outcome.error) if outcome.error else None}


class ExtrasView(GameAPIView):
    @extend_schema(
        request=PolymorphicProxySerializer(component_name="ExtraOrBatch", resource_type_field_name=None,
                                           serializers=[s.ExtraRequestSerializer, s.ExtraBatchSerializer]),
        responses={(200, "application/json"): PolymorphicProxySerializer(
            component_name="ExtraOutcomeOrBatch", resource_type_field_name=None,
            serializers=[s.ExtraOutcomeSerializer, s.ExtraBatchResultSerializer]),
                   (MULTI_STATUS, "application/json"): s.ExtraBatchResultSerializer,
                   (NONE_ACCEPTED, "application/json"): s.ExtraBatchResultSerializer}
        | {(code, "application/json"): body for code, body in ERRORS.items()},
        summary="Double, split, insurance, follow double / split: one (an object) or many ({\"extras\": [...]}, "
                "one result each, taken in order); returns what to apply (fallback)")
    def post(self, request, pk):
        round_ = _loaded(self.own_round(pk))
        shape = _batch_shape("extras", "extra stake", "extra stakes")
        data = _object(request.data, shape)
        if "extras" in data:
            outcomes = add_extra_stakes(round_id=pk, extras=_batch(data, "extras", "extra stakes"), **self.actor())
            return _batch_response([_extra_outcome(o, _money(round_)) for o in outcomes], status.HTTP_200_OK)
        outcome = add_extra_stake(round_id=pk, **_valid(s.ExtraRequestSerializer, data, shape), **self.actor())
        return Response(_extra_outcome(outcome, _money(round_)))


class PlayEventsView(GameAPIView):
    @extend_schema(request=s.PlayEventsSerializer, responses={201: s.RoundEventSerializer(many=True), **ERRORS},
                   summary="Report card scans, rescans, decisions and auto-play for the round's timeline")
    def post(self, request, pk):
        shape = f'{{"events": [...]}} with a list of 1 to {s.MAX_EVENTS} events'
        rows = report_play(round_id=self.own_round(pk), **_valid(s.PlayEventsSerializer, request.data, shape),
                           **self.actor())
        return Response(s.RoundEventSerializer(rows, many=True).data, status=status.HTTP_201_CREATED)


class ResultView(GameAPIView):
    @extend_schema(request=s.ResultRequestSerializer, responses={200: s.RecordedRoundSerializer, **ERRORS},
                   summary="Report the round record: checked against the bets and the cards scanned, stored, "
                           "settled after")
    def post(self, request, pk):
        return _round(record_result(round_id=self.own_round(pk), **_valid(s.ResultRequestSerializer, request.data),
                                    **self.actor()), s.RecordedRoundSerializer)


class SuspendView(GameAPIView):
    @extend_schema(request=s.ReasonSerializer, responses={200: s.RoundSerializer, **ERRORS}, summary="Suspend")
    def post(self, request, pk):
        return _round(suspend(round_id=self.own_round(pk), **_valid(s.ReasonSerializer, request.data),
                              **self.actor()))


class ResumeView(GameAPIView):
    @extend_schema(request=None, responses={200: s.RoundSerializer, **ERRORS}, summary="Resume a suspended round")
    def post(self, request, pk):
        return _round(resume(round_id=self.own_round(pk), **self.actor()))


class CancelView(GameAPIView):
    @extend_schema(request=s.CancelSerializer, responses={200: s.RoundSerializer, **ERRORS},
                   summary="Cancel: the round is voided, every stake refunded")
    def post(self, request, pk):
        return _round(cancel(round_id=self.own_round(pk), **_valid(s.CancelSerializer, request.data),
                             **self.actor()))
