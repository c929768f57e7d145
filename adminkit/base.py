"""The base classes of the operator pages: read-only pages and inlines (money, bets, records and the
ledger are never edited in the admin; changes go through the services behind the operator
actions), one object read per request, pages that name their rows by a field other than the
primary key (``AddressedBy``), and a page a higher floor completes (``replace_page``).
Knows no domain: every app's ``admin.py`` may use it."""

import json

from django.contrib import admin, messages
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.admin.options import get_content_type_for_model
from django.contrib.admin.utils import quote
from django.contrib.admin.views.main import ChangeList
from django.shortcuts import redirect
from django.urls import reverse


class ReadOnlyMixin:
    """Money, bets, records and the ledger are never edited in the admin: view only, no add, no
    delete. Changes go through the services behind the operator actions."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """A read-only admin page (``ReadOnlyMixin``)."""


class ReadOnlyInline(ReadOnlyMixin, admin.TabularInline):
    """A read-only inline (``ReadOnlyMixin``)."""

    extra = 0
    can_delete = False
    show_change_link = True


class RequestCachedObjectMixin:
    """``get_object`` once per request: ``change_view`` reads the object for its extra context and
    Django's ``changeform_view`` reads it again; this returns the first one (same query set)."""

    def get_object(self, request, object_id, from_field=None):
        cache = request.__dict__.setdefault("_admin_objects", {})
        key = (self.model._meta.label, str(object_id), from_field)
        if key not in cache:
            cache[key] = super().get_object(request, object_id, from_field)
        return cache[key]


class AddressedChangeList(ChangeList):
    """The list of an ``AddressedBy`` page: each row links to its page by the page's field."""

    def url_for_result(self, result):
        return self.model_admin.change_url(result)


class AddressedBy:
    """``ModelAdmin`` mixin for a model whose primary key is never shown (it embeds a secret's
    hash): its pages name a row by ``url_field``, a unique field, instead. The list's links, the
    change and history pages, the redirects after a save and the admin log use that field; the
    list has no action checkboxes and rows are not deleted here (both name rows by primary key);
    no popups."""

    url_field = None
    actions = None
    change_form_template = "admin/addressed_by/change_form.html"
    object_history_template = "admin/addressed_by/object_history.html"

    def url_id(self, obj):
        """The value that names ``obj`` in this page's URLs."""
        return str(getattr(obj, self.url_field))

    def _url(self, name, *args):
        return reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_{name}", args=args,
                       current_app=self.admin_site.name)

    def change_url(self, obj):
        return self._url("change", quote(self.url_id(obj)))

    def get_object(self, request, object_id, from_field=None):
        return self.get_queryset(request).filter(**{self.url_field: object_id}).first()

    def get_changelist(self, request, **kwargs):
        return AddressedChangeList

    def has_delete_permission(self, request, obj=None):
        return False

    def change_view(self, request, object_id, form_url="", extra_context=None):
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), "url_id": object_id})

    def history_view(self, request, object_id, extra_context=None):
        return super().history_view(request, object_id, {**(extra_context or {}), "url_id": object_id})

    def _log(self, request, obj, flag, message):
        return LogEntry.objects.create(
            user_id=request.user.pk, content_type_id=get_content_type_for_model(obj).pk,
            object_id=self.url_id(obj), object_repr=str(obj)[:200], action_flag=flag,
            change_message=json.dumps(message) if isinstance(message, list) else message)

    def log_addition(self, request, obj, message):
        return self._log(request, obj, ADDITION, message)

    def log_change(self, request, obj, message):
        return self._log(request, obj, CHANGE, message)

    def _after_save(self, request, obj, done):
        self.message_user(request, f"The {self.opts.verbose_name} “{obj}” was {done}.", messages.SUCCESS)
        if "_continue" in request.POST:
            return redirect(self.change_url(obj))
        if "_addanother" in request.POST:
            return redirect(self._url("add"))
        return redirect(self._url("changelist"))

    def response_add(self, request, obj, post_url_continue=None):
        return self._after_save(request, obj, "added")

    def response_change(self, request, obj):
        return self._after_save(request, obj, "changed")


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
