"""The operator site: Django's admin behind a password, a lockout (django-axes, at authentication)
and a TOTP second factor (django-otp).

A staff user is let in only once verified by a confirmed TOTP device in this session. At the first
login (a staff user without a confirmed device) the password alone opens the enrolment page and
nothing else: it shows the device's provisioning URI (``otpauth://``, also as a QR code) and
confirms the device on a valid code, which verifies the session. Later logins ask for the code with
the password.

The password alone enrols a device only while the account's enrolment window is open
(``enrolment_open``): ``OTP_ENROLMENT_WINDOW_SECONDS`` from the account's creation, or from a
superuser's reset of its second factor (``reset_second_factor``: deleting a device on the TOTP
devices page, or ``manage.py reset_second_factor``), and never while it has a confirmed device.
Outside it the enrolment page shows no key and says to ask a superuser for a reset.
"""

import base64
from datetime import timedelta
from functools import update_wrapper
from io import BytesIO

from django import forms
from django.conf import settings
from django.db import transaction
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django_otp import login as otp_login
from django_otp import user_has_device
from django_otp.admin import OTPAdminAuthenticationForm, OTPAdminSite
from django_otp.plugins.otp_totp.models import TOTPDevice
from django_otp.qr import write_qrcode_image

from .query import refused_request

#: The name of the device the enrolment page creates.
DEVICE_NAME = "authenticator"
#: The name of the unconfirmed device a reset leaves: its ``created_at`` opens the enrolment window.
RESET_NAME = "authenticator (reset)"


class StaffLoginForm(OTPAdminAuthenticationForm):
    """The password, and the TOTP code of a user who has a confirmed device (no device to choose:
    their TOTP device); a user without one signs in unverified, which opens the enrolment page
    only."""

    def clean(self):
        self.cleaned_data = super(OTPAdminAuthenticationForm, self).clean()  # password, is_staff
        user = self.get_user()
        if user_has_device(user, confirmed=True):
            self.clean_otp(user)
        return self.cleaned_data

    def _chosen_device(self, user):
        """The device picked on the form, else the user's confirmed TOTP device (staff have one)."""
        return (super()._chosen_device(user)
                or TOTPDevice.objects.devices_for_user(user).select_for_update().order_by("pk").first())


class EnrolForm(forms.Form):
    token = forms.CharField(label="Code from the authenticator app", max_length=8, strip=True,
                            widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}))


def needs_enrolment(user):
    """True for an active staff user, signed in but not verified, who has no confirmed device."""
    return (user.is_authenticated and user.is_active and user.is_staff and not user.is_verified()
            and not user_has_device(user, confirmed=True))


def enrolment_open(user, now=None):
    """True while ``user`` may enrol a device with the password alone: no confirmed device, and
    ``OTP_ENROLMENT_WINDOW_SECONDS`` have not passed since the account was created
    (``date_joined``) or since a superuser's latest reset (``reset_second_factor``)."""
    if user_has_device(user, confirmed=True):
        return False
    resets = TOTPDevice.objects.filter(user=user, confirmed=False, name=RESET_NAME).values_list("created_at", flat=True)
    opened = max([user.date_joined, *resets])
    return (now or timezone.now()) - opened < timedelta(seconds=settings.OTP_ENROLMENT_WINDOW_SECONDS)


@transaction.atomic
def reset_second_factor(user):
    """A superuser's reset of ``user``'s second factor: every TOTP device of theirs is deleted and
    the enrolment window opens again (an unconfirmed ``RESET_NAME`` device, the one the enrolment
    page then shows). Returns that device."""
    TOTPDevice.objects.filter(user=user).delete()
    return TOTPDevice.objects.create(user=user, name=RESET_NAME, confirmed=False)


class StaffAdminSite(OTPAdminSite):
    """``admin.site``: django-otp's admin site (verified staff only) with first-login enrolment; a
    request ``adminkit.query.refused_request`` refuses is a plain 400 on every page."""

    login_form = StaffLoginForm

    def __init__(self, name="admin"):
        super().__init__(name)

    def admin_view(self, view, cacheable=False):
        inner = super().admin_view(view, cacheable)

        model_admin = getattr(view, "__self__", None)  # a ModelAdmin's view

        def wrapper(request, *args, **kwargs):
            refused = refused_request(request, model_admin)
            if refused is not None:
                return HttpResponseBadRequest(refused, content_type="text/plain; charset=utf-8")
            if needs_enrolment(request.user) and request.path != reverse("admin:logout", current_app=self.name):
                return redirect(reverse("admin:otp_enrol", current_app=self.name))
            return inner(request, *args, **kwargs)

        return update_wrapper(wrapper, view)

    def get_urls(self):
        return [path("otp/enrol/", csrf_protect(never_cache(self.enrol)), name="otp_enrol")] + super().get_urls()

    def enrol(self, request):
        """``/admin/otp/enrol/``: the first-login page of a staff user without a confirmed device
        (others go to the index, or the login page): while their enrolment window is open
        (``enrolment_open``) the provisioning URI and QR code of an unconfirmed TOTP device
        (created once, kept until confirmed), and the code that confirms it; once it is closed, a
        403 page without any key that says to ask a superuser for a reset."""
        if not needs_enrolment(request.user):
            return redirect(reverse("admin:index", current_app=self.name))
        if not enrolment_open(request.user):
            return TemplateResponse(request, "admin/otp/enrolment_closed.html", {
                **self.each_context(request), "title": "Set up your second factor"}, status=403)
        device = (TOTPDevice.objects.filter(user=request.user, confirmed=False).order_by("pk").first()
                  or TOTPDevice.objects.create(user=request.user, name=DEVICE_NAME, confirmed=False))
        form = EnrolForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            if device.verify_token(form.cleaned_data["token"]):
                device.confirmed = True
                device.save(update_fields=["confirmed"])
                otp_login(request, device)
                return redirect(reverse("admin:index", current_app=self.name))
            form.add_error("token", "That code is not valid: type the code your app shows now.")
        qr = BytesIO()
        write_qrcode_image(device.config_url, qr)
        return TemplateResponse(request, "admin/otp/enrol.html", {
            **self.each_context(request), "title": "Set up your second factor", "form": form,
            "config_url": device.config_url, "secret": base64.b32encode(device.bin_key).decode(),
            "qr_svg": qr.getvalue().decode()})

