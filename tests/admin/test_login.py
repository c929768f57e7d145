"""Staff login to the admin (adminkit.site): lockout after repeated wrong passwords (django-axes),
a TOTP second factor with first-login enrolment (django-otp), 8-hour sessions, passwords of 12
characters or more, and X-Forwarded-Proto believed only when configured."""

import re
from io import StringIO

import pytest
from django.contrib.auth.models import Permission
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client
from django_otp.plugins.otp_totp.models import TOTPDevice

from adminkit.roles import SUPERVISOR
from tests.factories import OPERATOR_PASSWORD, make_operator, otp_login, totp_code, totp_device

pytestmark = pytest.mark.django_db
LOGIN = "/admin/login/?next=/admin/"


def _post_login(client, username, password, token=""):
    return client.post(LOGIN, {"username": username, "password": password, "otp_token": token})


def _signed_in(client):
    return "_auth_user_id" in client.session


def test_the_right_password_is_refused_while_locked_out(client, settings):
    user = make_operator(SUPERVISOR)
    device = totp_device(user)
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _post_login(client, user.username, "wrong-password-123")
    locked = _post_login(client, user.username, OPERATOR_PASSWORD, totp_code(device))
    assert locked.status_code == 429 and not _signed_in(client)
    other = make_operator(SUPERVISOR, username="another")  # the lock is per username and address
    assert _post_login(client, other.username, OPERATOR_PASSWORD, totp_code(totp_device(other))).status_code == 302
    assert _signed_in(client)


def test_a_success_before_the_limit_resets_the_count(client, settings):
    user = make_operator(SUPERVISOR)
    device = totp_device(user)
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _post_login(client, user.username, "wrong-password-123")
    assert _post_login(client, user.username, OPERATOR_PASSWORD, totp_code(device)).status_code == 302
    client.logout()
    _post_login(client, user.username, "wrong-password-123")
    assert _post_login(client, user.username, OPERATOR_PASSWORD, totp_code(device, offset=1)).status_code == 302


def test_staff_with_a_device_need_its_code(client, settings):
    settings.OTP_TOTP_THROTTLE_FACTOR = 0  # a wrong code delays the next try: not what is tested here
    user = make_operator(SUPERVISOR)
    device = totp_device(user)
    assert _post_login(client, user.username, OPERATOR_PASSWORD).status_code == 200 and not _signed_in(client)
    assert _post_login(client, user.username, OPERATOR_PASSWORD, "000000" if totp_code(device) != "000000"
                       else "111111").status_code == 200 and not _signed_in(client)
    assert _post_login(client, user.username, OPERATOR_PASSWORD, totp_code(device)).status_code == 302
    assert client.get("/admin/").status_code == 200


def test_a_session_not_verified_by_a_device_is_not_let_in(client):
    user = make_operator(SUPERVISOR)
    totp_device(user)
    client.force_login(user)  # the password alone
    response = client.get("/admin/wagering/bet/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    assert otp_login(client, user).get("/admin/wagering/bet/").status_code == 200


def test_first_login_enrols_a_device_and_nothing_else_opens_before(client, settings):
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    user = make_operator(SUPERVISOR)
    response = _post_login(client, user.username, OPERATOR_PASSWORD)
    assert response.status_code == 302 and _signed_in(client)
    for path in ("/admin/", "/admin/wagering/bet/", "/admin/settlement/dispute/"):
        assert client.get(path)["Location"] == "/admin/otp/enrol/"
    page = client.get("/admin/otp/enrol/").content.decode()
    uri = re.search(r'id="otp-uri">([^<]+)<', page).group(1)
    assert uri.startswith("otpauth://totp/") and "<svg" in page
    device = TOTPDevice.objects.get(user=user)
    assert not device.confirmed and client.get("/admin/otp/enrol/") and TOTPDevice.objects.count() == 1
    wrong = "000000" if totp_code(device) != "000000" else "111111"
    assert "not valid" in client.post("/admin/otp/enrol/", {"token": wrong}).content.decode()
    assert client.post("/admin/otp/enrol/", {"token": totp_code(device)})["Location"] == "/admin/"
    device.refresh_from_db()
    assert device.confirmed and client.get("/admin/").status_code == 200
    assert client.get("/admin/otp/enrol/")["Location"] == "/admin/"  # no second device behind the first


def test_the_demo_admin_logs_in_and_enrols(client):
    out = StringIO()
    call_command("create_demo_users", stdout=out)
    password = re.search(r"Provider operator: demo-operator / (\S+)", out.getvalue()).group(1)
    assert "/admin/otp/enrol/" in out.getvalue()
    assert _post_login(client, "demo-operator", password).status_code == 302
    assert client.get("/admin/")["Location"] == "/admin/otp/enrol/"


def test_a_staff_session_lasts_eight_hours(client, settings):
    user = make_operator(SUPERVISOR)
    _post_login(client, user.username, OPERATOR_PASSWORD, totp_code(totp_device(user)))
    assert settings.SESSION_COOKIE_AGE == 8 * 3600
    assert client.cookies[settings.SESSION_COOKIE_NAME]["max-age"] == 8 * 3600


def test_staff_passwords_have_twelve_characters_at_least():
    with pytest.raises(ValidationError, match="at least 12"):
        validate_password("Xq7#vLp2!sA")  # 11
    validate_password("Xq7#vLp2!sAz")


def test_a_clients_own_forwarded_proto_is_not_believed(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    response = client.get("/admin/login/", HTTP_X_FORWARDED_PROTO="https")
    assert response.status_code == 301 and response["Location"].startswith("https://")


def test_the_password_alone_enrols_only_within_the_enrolment_window(client, admin_user, settings):
    """Issue 20, F8: a password enrols a second factor only while the account's enrolment window
    is open (its creation, or a superuser's reset) and never over a confirmed device: outside it
    the enrolment page shows no key (403); a superuser's deletion of the device reopens it."""
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    user = make_operator(SUPERVISOR)
    get_user_model().objects.filter(pk=user.pk).update(
        date_joined=timezone.now() - timedelta(seconds=settings.OTP_ENROLMENT_WINDOW_SECONDS + 1))
    assert _post_login(client, user.username, OPERATOR_PASSWORD).status_code == 302
    closed = client.get("/admin/otp/enrol/")
    assert closed.status_code == 403 and "ask a superuser" in closed.content.decode().lower()
    assert 'id="otp-secret"' not in closed.content.decode() and not TOTPDevice.objects.filter(user=user).exists()
    assert client.get("/admin/wagering/bet/")["Location"] == "/admin/otp/enrol/"
    device = totp_device(user)  # enrolled once: its password never shows a key again
    client.logout()
    assert _post_login(client, user.username, OPERATOR_PASSWORD).status_code == 200 and not _signed_in(client)
    # a superuser's reset: the device deleted on its page, and the window open again
    admin_client = otp_login(Client(), admin_user)
    assert admin_client.post(f"/admin/otp_totp/totpdevice/{device.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not TOTPDevice.objects.filter(user=user, confirmed=True).exists()
    assert _post_login(client, user.username, OPERATOR_PASSWORD).status_code == 302
    page = client.get("/admin/otp/enrol/")
    assert page.status_code == 200 and 'id="otp-secret"' in page.content.decode()


def test_only_a_superuser_resets_a_second_factor(client):
    """The TOTP devices' page is the provider's, and only a superuser deletes (resets) a device."""
    staff = make_operator(SUPERVISOR)
    staff.user_permissions.add(*Permission.objects.filter(codename__endswith="totpdevice"))
    other = totp_device(make_operator(SUPERVISOR, username="other"))
    otp_login(client, staff)
    assert client.get(f"/admin/otp_totp/totpdevice/{other.pk}/delete/").status_code == 403
    assert client.post(f"/admin/otp_totp/totpdevice/{other.pk}/delete/", {"post": "yes"}).status_code == 403
    assert TOTPDevice.objects.filter(pk=other.pk, confirmed=True).exists()


def test_reset_second_factor_command_opens_the_window(client, settings):
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from adminkit.site import enrolment_open

    user = make_operator(SUPERVISOR)
    totp_device(user)
    get_user_model().objects.filter(pk=user.pk).update(date_joined=timezone.now() - timedelta(days=30))
    user.refresh_from_db()
    assert not enrolment_open(user)
    call_command("reset_second_factor", user.username, stdout=StringIO())
    assert enrolment_open(user) and not TOTPDevice.objects.filter(user=user, confirmed=True).exists()
    assert not enrolment_open(user, now=timezone.now() + timedelta(seconds=settings.OTP_ENROLMENT_WINDOW_SECONDS))
