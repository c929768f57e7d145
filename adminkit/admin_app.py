"""``django.contrib.admin`` as installed (``INSTALLED_APPS``): its ``admin.site`` is the operator
site of ``adminkit.site`` (a module that needs the app registry, so it is named here, not imported)."""

from django.contrib.admin.apps import AdminConfig


class StaffAdminConfig(AdminConfig):
    default_site = "adminkit.site.StaffAdminSite"
