"""The base view of the player and operator APIs: JSON in and out, the error format of
``delivery.api.common``, strict query strings, a list's filters and a row by its path id.

Errors are ``{"code": ..., "detail": ...}``: 400 ``invalid_input`` for a query parameter the view
does not read, one given twice, an empty one or one holding a NUL byte (nothing is read or written
then), bad filter values and bad bodies; 404 ``not_found`` for a row that is not there or not the
caller's.
"""

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from django_filters.rest_framework import DjangoFilterBackend
from django_filters.utils import translate_validation
from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions as drf
from rest_framework.generics import GenericAPIView

from delivery.api.common import (
    JSONOnly,
    SafeJSONParser,
    refuse_nul_query_params,
    refuse_repeated_query_params,
    refuse_unknown_query_params,
)
from delivery.api.common import exception_handler as common_exception_handler
from delivery.api.player.pagination import MAX_ID

#: The path's ``{id}`` of a detail view (``owned``), as the schema states it.
ID_PARAMETER = OpenApiParameter("id", {"type": "integer", "format": "int64", "minimum": 1, "maximum": MAX_ID},
                                OpenApiParameter.PATH)


def exception_handler(exc, context):
    """``delivery.api.common.exception_handler``, with Django's 404 / 403 given DRF's codes."""
    if isinstance(exc, Http404):
        exc = drf.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = drf.PermissionDenied()
    return common_exception_handler(exc, context)


class StrictAPIView(JSONOnly, GenericAPIView):
    """Base of the player and operator views: JSON only (whatever ``Accept`` asks for; OPTIONS
    405), the strict parser, and strict query strings: only the filter's and the paginator's
    parameters, each once, none empty, no NUL byte (400 otherwise: ``?format=`` is one more unknown
    parameter)."""

    parser_classes = [SafeJSONParser]
    metadata_class = None  # OPTIONS: 405
    filter_backends = []
    pagination_class = None

    def get_exception_handler(self):
        return exception_handler

    @property
    def allowed_methods(self):
        """The methods the view answers, for ``Allow``: OPTIONS left out (it answers 405)."""
        return [m for m in super().allowed_methods if m != "OPTIONS"]

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if not hasattr(self, request.method.lower()):
            return  # 405 follows
        allowed = set(getattr(getattr(self, "filterset_class", None), "base_filters", ()))
        if self.pagination_class:
            allowed.update(self.paginator.query_params)
        refuse_nul_query_params(request)  # first: no other refusal echoes a NUL
        refuse_unknown_query_params(request, allowed)
        refuse_repeated_query_params(request)
        values = [(key, value) for key, values in request.query_params.lists() for value in values]
        empty = sorted({key for key, value in values if not value})
        if empty:
            raise drf.ValidationError(f"empty query parameter(s): {', '.join(empty)}")

    def body(self, serializer_class):
        """The request body validated by ``serializer_class``: its ``validated_data``;
        ``ValidationError`` (400) otherwise."""
        serializer = serializer_class(data=self.request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

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

    def owned(self, queryset, pk, what):
        """The row ``pk`` (a path string) of ``queryset`` (already limited to the caller's own rows);
        ``NotFound`` naming it (``what``: ``round``, ``dispute``) when it is not a positive id or
        not there."""
        return found_or_404(queryset.filter(pk=path_id(pk, what)).first(), what, pk)


def path_id(pk, what):
    """The id ``pk`` (a path string) as an int; ``NotFound`` naming it (``what``) when it is not a
    positive id."""
    if not pk.isascii() or not pk.isdigit() or not 1 <= int(pk) <= MAX_ID:
        raise drf.NotFound(_no(what, pk))
    return int(pk)


def found_or_404(found, what, pk):
    """``found``, unless None: ``NotFound`` naming what was asked for (``what`` ``pk``)."""
    if found is None:
        raise drf.NotFound(_no(what, pk))
    return found


def _no(what, pk):
    """The sentence of a 404 for ``what`` ``pk``: the id as given (quoted when it is no number)."""
    pk = str(pk)
    return f"no {what} {pk if pk.isascii() and pk.isdigit() else repr(pk[:32])} of yours"
