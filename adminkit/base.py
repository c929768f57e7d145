"""The base classes of the operator pages: read-only pages and inlines (money, bets, records and the
ledger are never edited in the admin; changes go through the services behind the operator
actions), one object read per request, and a page a higher floor completes (``replace_page``).
Knows no domain: every app's ``admin.py`` may use it."""

from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """Money, bets, records and the ledger are never edited in the admin: view only, no add, no
    delete. Changes go through the services behind the operator actions."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyInline(admin.TabularInline):
    """A read-only inline (same rule as ``ReadOnlyAdmin``)."""

    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class RequestCachedObjectMixin:
    """``get_object`` once per request: ``change_view`` reads the object for its extra context and
    Django's ``changeform_view`` reads it again; this returns the first one (same query set)."""

    def get_object(self, request, object_id, from_field=None):
        cache = request.__dict__.setdefault("_admin_objects", {})
        key = (self.model._meta.label, str(object_id), from_field)
        if key not in cache:
            cache[key] = super().get_object(request, object_id, from_field)
        return cache[key]


def replace_page(model):
    """Class decorator: register the decorated ``ModelAdmin`` for ``model`` in place of the one an
    app lower in the house registered. An app's ``admin.py`` shows what its floor knows; a higher
    floor completes the page with what only it knows (a player's bets and disputes, a round's
    replay and actions), subclassing the lower page, without the lower floor importing it. The
    higher app must come later in ``INSTALLED_APPS`` (admin modules load in that order)."""
    def register(admin_class):
        admin.site.unregister(model)
        admin.site.register(model, admin_class)
        return admin_class
    return register
