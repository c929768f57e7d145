"""Which operator's rows a user of the operator site sees, and the one way every page narrows its
rows to them.

A staff user with an ``OperatorStaff`` row is that operator's: they see only its rows. Staff
without one are the provider's and see every row. Every page of the site (a ``ModelAdmin`` or an
inline, through ``OperatorScoped``) declares ``operator_path``, the lookup from its model to the
operator that owns a row:

- a lookup such as ``"operator"``, ``"player__operator"``, ``"bets__player__operator"`` (a row is
  an operator's when one of its related rows is: a round is every operator's with a bet in it),
  ``"id"`` for ``Operator`` itself;
- ``SHARED``: rows every operator shares (tables, currencies): operator staff view them, and
  never add, change or delete them;
- ``PROVIDER``: rows only the provider's staff see (another operator's data is in them).

Pages apply it in ``get_queryset``, so their lists, searches, exports, actions and object pages
never reach another operator's rows; views outside a page read through ``visible``.
"""

from django.contrib import admin
from django.core.exceptions import ImproperlyConfigured, ObjectDoesNotExist
from django.db.models import Exists, OuterRef
from django.http import Http404


class Scope:
    """A declaration of ``operator_path`` that is not a lookup (``SHARED``, ``PROVIDER``)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


SHARED = Scope("SHARED")
PROVIDER = Scope("PROVIDER")


def operator_id_of(request):
    """The id of the operator whose staff ``request.user`` is; None for the provider's staff and
    for anonymous users. Read once per request."""
    if "_operator_id" not in request.__dict__:
        operator_id = None
        if request.user.is_authenticated:
            try:
                operator_id = request.user.operator_staff.operator_id
            except ObjectDoesNotExist:
                pass
        request.__dict__["_operator_id"] = operator_id
    return request.__dict__["_operator_id"]


def is_provider(request):
    """True when ``request.user`` is the provider's (no ``OperatorStaff`` row): they see all."""
    return operator_id_of(request) is None


def _crosses_many(model, path):
    """True when lookup ``path`` from ``model`` follows a one-to-many or many-to-many relation."""
    opts = model._meta
    for name in path.split("__")[:-1]:
        field = opts.get_field(name)
        if field.one_to_many or field.many_to_many:
            return True
        opts = field.related_model._meta
    return False


def scoped(queryset, path, operator_id):
    """``queryset`` narrowed to the rows of operator ``operator_id`` through ``path`` (a lookup,
    ``SHARED`` or ``PROVIDER``, see the module); unchanged for ``operator_id`` None (the
    provider). A path through a one-to-many relation keeps each row once (an ``EXISTS``)."""
    if operator_id is None or path is SHARED:
        return queryset
    if path is PROVIDER:
        return queryset.none()
    if _crosses_many(queryset.model, path):
        ours = queryset.model._base_manager.filter(pk=OuterRef("pk"), **{path: operator_id})
        return queryset.filter(Exists(ours))
    return queryset.filter(**{path: operator_id})


def visible(request, queryset, site=admin.site):
    """``queryset`` narrowed to what ``request.user`` sees of its model, by the ``operator_path``
    of the model's page on ``site`` (for views the pages route to, which read rows themselves)."""
    page = site.get_model_admin(queryset.model)
    if not isinstance(page, OperatorScoped):
        raise ImproperlyConfigured(f"the page of {queryset.model._meta.label} is not OperatorScoped")
    return page.scope(request, queryset)


class OperatorScoped:
    """Mixin of a ``ModelAdmin`` or an inline declaring ``operator_path`` (see the module; a page
    without one is refused when it is built). For operator staff: ``get_queryset`` holds only
    their operator's rows; every foreign-key and many-to-many choice only what the related
    model's page shows them; another operator's row by URL is a 404 (the provider's staff keep
    Django's redirect); ``SHARED`` pages are view-only and ``PROVIDER`` pages closed (403)."""

    operator_path = None

    def __init__(self, *args, **kwargs):
        if self.operator_path is None:
            raise ImproperlyConfigured(f"{type(self).__name__} declares no operator_path (accounts.scoping)")
        super().__init__(*args, **kwargs)

    def scope(self, request, queryset):
        """``queryset`` (of this page's model) narrowed to what ``request.user`` sees."""
        return scoped(queryset, self.operator_path, operator_id_of(request))

    def get_queryset(self, request):
        return self.scope(request, super().get_queryset(request))

    def get_field_queryset(self, db, db_field, request):
        queryset = super().get_field_queryset(db, db_field, request)
        related = db_field.remote_field.model
        if not self.admin_site.is_registered(related):
            return queryset
        page = self.admin_site.get_model_admin(related)
        if not isinstance(page, OperatorScoped) or is_provider(request):
            return queryset
        return page.scope(request, queryset if queryset is not None else related._default_manager.using(db))

    def _closed(self, request):
        return self.operator_path is PROVIDER and not is_provider(request)

    def _frozen(self, request):
        return isinstance(self.operator_path, Scope) and not is_provider(request)

    def has_view_permission(self, request, obj=None):
        return not self._closed(request) and super().has_view_permission(request, obj)

    def has_add_permission(self, request, *args):
        return not self._frozen(request) and super().has_add_permission(request, *args)

    def has_change_permission(self, request, obj=None):
        return not self._frozen(request) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not self._frozen(request) and super().has_delete_permission(request, obj)

    def _get_obj_does_not_exist_redirect(self, request, opts, object_id):
        if not is_provider(request):
            raise Http404(f"no {opts.verbose_name} {object_id!r}")
        return super()._get_obj_does_not_exist_redirect(request, opts, object_id)


def close_unscoped_pages(site=admin.site):
    """Register every page of ``site`` that is not ``OperatorScoped`` (the pages of Django's and
    the libraries' apps: users, groups, tokens, beat schedules) again as a ``PROVIDER`` page."""
    for model, page in list(site._registry.items()):
        if not isinstance(page, OperatorScoped):
            site.unregister(model)
            site.register(model, type(type(page).__name__, (OperatorScoped, type(page)), {"operator_path": PROVIDER}))
