"""The admin app with the back office's own site (``config.admin.BackOfficeSite``) as its default."""

from django.contrib.admin.apps import AdminConfig


class BackOfficeAdminConfig(AdminConfig):
    default_site = "config.admin.BackOfficeSite"
