"""The requests the operator site refuses before any page reads them: a value no database column
can hold, no date can have or no primary key can be would reach a query and fail there (a 500)."""

import re

from django.core.exceptions import FieldDoesNotExist, FieldError, ValidationError
from django.db import models

from .filters import InputFilter

#: The range of the integer primary keys (PostgreSQL's bigint).
PK_RANGE = range(-2**63, 2**63)

#: The date-part lookups of Django's admin filters and date hierarchy (``opened_at__year=2026``).
DATE_PARTS = ("year", "iso_year", "quarter", "month", "week", "week_day", "iso_week_day", "day",
              "hour", "minute", "second")
_DATE_PART = re.compile(r"__(?:" + "|".join(DATE_PARTS) + ")$")
_SMALL_NUMBER = re.compile(r"[0-9]{1,4}")
_INTEGER = re.compile(r"\s*[-+]?[0-9]+\s*")


def refused_request(request, model_admin=None):
    """The sentence saying why ``request`` is refused, or None: its path holding a NUL character,
    its query string refused (``refused_query``, for a page of ``model_admin``, a ``ModelAdmin``),
    or, posted to a list of its model (a changelist action), a selected object
    (``_selected_action``) that is no primary key of that model."""
    if "\x00" in request.path:
        return "The address holds a NUL character."
    model = getattr(model_admin, "model", None)
    refused = refused_query(request.GET, model, handled=_input_parameters(model_admin))
    if refused is None and model is not None and request.method == "POST":
        for value in request.POST.getlist("_selected_action"):
            try:
                pk = model._meta.pk.to_python(value)
            except ValidationError:
                pk = None
            if pk is None or "\x00" in str(pk) or (isinstance(pk, int) and pk not in PK_RANGE):
                return f"{value[:32]!r} is no {model._meta.verbose_name} of this list."
    return refused


def _input_parameters(model_admin):
    """The query parameters ``model_admin``'s text-input filters read themselves
    (``adminkit.filters.InputFilter``: a bad value is ignored there, with a message)."""
    return {name for f in getattr(model_admin, "list_filter", ()) if isinstance(f, type) and issubclass(f, InputFilter)
            for name, _, _ in f.inputs}


def refused_query(query, model=None, *, handled=frozenset()):
    """The sentence saying why ``query`` (a request's ``GET``, a ``QueryDict``) is refused, or None:
    a parameter's name or value holding a NUL character (no database column holds one), a
    date-part lookup (``DATE_PARTS``: ``…__year``, ``…__month``…) whose value is not a number of 1
    to 4 digits, or a lookup of ``model`` ending on an integer column (a primary or foreign key:
    ``operator``, ``player__id__exact``, ``round__in``) given an integer beyond ``PK_RANGE`` (SQLite
    cannot even be asked about one), unless a filter reads that parameter itself (``handled``)."""
    for key, values in query.lists():
        if "\x00" in key or any("\x00" in value for value in values):
            return "A query parameter holds a NUL character: remove it from the address."
        if _DATE_PART.search(key) and not all(_SMALL_NUMBER.fullmatch(value) for value in values):
            return f"{key[:64]}: a date part is a number of 1 to 4 digits."
        if model is not None and key not in handled and _integer_lookup(model, key):
            for item in (item for value in values for item in value.split(",")):
                if _INTEGER.fullmatch(item) and int(item) not in PK_RANGE:
                    return f"{key[:64]}: {item.strip()[:32]} is beyond the ids of this site."
    return None


def _integer_lookup(model, key):
    """Whether the lookup ``key`` (``field__related_field__lookup``) of ``model`` ends on an integer
    column: an integer field, or a relation (compared by its target's key)."""
    field, opts = None, model._meta
    for part in key.split("__"):
        try:
            field = opts.get_field(part)
        except FieldDoesNotExist:
            break  # a lookup (exact, in, gte…), or no field at all
        if field.related_model is None:
            break
        opts = field.related_model._meta
    if field is not None and field.is_relation:
        try:
            field = field.target_field
        except (AttributeError, FieldError):  # a generic relation, or one of several columns
            return False
    return isinstance(field, models.IntegerField)
