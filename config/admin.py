"""The operator site (Django's admin) of the back office: ``adminkit.site``'s staff site (password,
lockout, TOTP second factor) whose index is the dashboard (``settlement.dashboard``), scoped to
the user's operator (``accounts.scoping``). Installed as
the admin's default site (``config.apps.BackOfficeAdminConfig``), so every app's pages register
on it as on ``admin.site``."""

from django.conf import settings

from accounts.models import Operator
from accounts.scoping import operator_id_of
from adminkit.filters import operator_zone
from adminkit.site import StaffAdminSite
from settlement import dashboard


class BackOfficeSite(StaffAdminSite):
    site_header = "Live blackjack back office"
    site_title = "Back office"
    index_title = "Dashboard"
    index_template = "admin/dashboard.html"

    def index(self, request, extra_context=None):
        """Django's index (the pages the user may open) with the dashboard above them: the
        provider's staff see every operator, operator staff their operator's days (in its zone)."""
        operator_id = operator_id_of(request)
        zone = (Operator.objects.values_list("time_zone", flat=True).get(pk=operator_id)
                if operator_id is not None else operator_zone(request))
        board = dashboard.build(operator_id=operator_id, zone=zone)
        return super().index(request, {**(extra_context or {}), "board": board, "zone": zone,
                                             "rtp_z": settings.RTP_WATCH_Z})
