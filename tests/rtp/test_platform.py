"""Theoretical RTP in the platform (tables.rtp): the cache key, the cached report, the task queued
by the admin's save, the admin's RTP display and pay-table preview, and ``manage.py rtp``."""
import json
from io import StringIO
from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from settlement.models import Alert
from tables import rtp
from tables.engine import ruleset
from tables.engine.rtp.cli import format_report
from tables.models import Table, TheoreticalRtp
from tables.tasks import compute_table_rtp
from tests.factories import PremiumTableFactory, UserFactory, otp_login

pytestmark = pytest.mark.django_db


def test_rules_key_is_the_variant_and_the_pay_tables_in_force():
    base = rtp.rules_key(ruleset("premium"))
    assert rtp.rules_key(ruleset("premium", {"pairs": {"perfect_pair": "30"}})) == base  # the default
    assert rtp.rules_key(ruleset("premium", {"pairs": {"perfect_pair": "25.0"}})) == \
        rtp.rules_key(ruleset("premium", {"pairs": {"perfect_pair": 25}})) != base
    assert rtp.rules_key(ruleset("boundless")) != base


def test_task_computes_once_and_tables_with_the_same_rules_share_it():
    a, b = PremiumTableFactory(), PremiumTableFactory()
    assert rtp.table_report(a) is None
    key = compute_table_rtp.apply(args=[a.pk]).get()
    assert TheoreticalRtp.objects.get().key == key == rtp.rules_key(b.rules())
    rep = rtp.table_report(b)
    assert rep["main"]["rtp"] == pytest.approx(0.99517, abs=1e-4)
    assert rtp.expected_rtp(rep, "behind") == rep["main"]["rtp"]
    assert rtp.expected_rtp(rep, "pairs") == rep["side_bets"]["pairs"]["rtp"]
    assert rtp.expected_rtp(rep, "bust_bonus") is None
    compute_table_rtp.apply(args=[b.pk])
    assert TheoreticalRtp.objects.count() == 1


def test_management_command_prints_the_tables_own_pay_tables():
    table = PremiumTableFactory(pay_tables={"pairs": {"perfect_pair": "25"}})
    out = StringIO()
    call_command("rtp", table=table.code, stdout=out)
    rep = rtp.table_report(table)
    assert out.getvalue() == f"table {table.code} ({table.name}), pay tables in force\n{format_report(rep)}\n"
    assert "perfect_pair 25:1" in out.getvalue()
    out = StringIO()
    call_command("rtp", table=table.code, json=True, stdout=out)
    assert json.loads(out.getvalue()) == rep
    assert rep["side_bets"]["pairs"]["rtp"] < rtp.preview_report("premium", {})["side_bets"]["pairs"]["rtp"]
    with pytest.raises(CommandError, match="no table"):
        call_command("rtp", table="nope")


@pytest.fixture
def admin_client(client):
    user = UserFactory(is_staff=True, is_superuser=True)
    return otp_login(client, user)


def test_admin_save_queues_the_computation_and_the_page_shows_rtp_and_alerts(admin_client,
                                                                             django_capture_on_commit_callbacks):
    table = PremiumTableFactory()
    url = reverse("admin:tables_table_change", args=[table.pk])
    page = admin_client.get(url).content.decode()
    assert "not computed yet" in page and "Preview RTP" in page  # nothing computed on the view: queued
    assert 'name="pay_tables__pairs__perfect_pair"' in page and 'name="pay_tables"' not in page  # odds, not JSON
    form = {"code": table.code, "name": table.name, "variant": "premium", "currency": "EUR", "status": "open",
            "studio": str(table.studio_id),
            "seats": "7", "penetration": "75", "suspend_limit_seconds": "600",
            "pay_tables__pairs__perfect_pair": "25", "pay_tables__pairs__mixed_pair": "",
            "pay_tables_reason": "a richer perfect pair",
            "limits-TOTAL_FORMS": "0", "limits-INITIAL_FORMS": "0", "seat_set-TOTAL_FORMS": "0",
            "seat_set-INITIAL_FORMS": "0"}
    form.update({f"limits-{i}-{k}": v for i, lim in enumerate(table.limits.all()) for k, v in
                 {"id": lim.pk, "table": table.pk, "bet_type": lim.bet_type, "min_stake": lim.min_stake,
                  "max_stake": lim.max_stake, "chip_step": lim.chip_step}.items()})
    form["limits-TOTAL_FORMS"] = form["limits-INITIAL_FORMS"] = str(table.limits.count())
    with mock.patch.object(compute_table_rtp, "delay") as delay, \
            django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, form)
    assert response.status_code == 302, response.content.decode()[:2000]
    delay.assert_called_once_with(table.pk)
    assert Table.objects.get(pk=table.pk).pay_tables == {"pairs": {"perfect_pair": "25"}}
    compute_table_rtp.apply(args=[table.pk])
    Alert.objects.create(kind=Alert.Kind.RTP_DEVIATION, table=table, message="observed RTP far too low")
    page = admin_client.get(url).content.decode()
    pairs = rtp.table_report(Table.objects.get(pk=table.pk))["side_bets"]["pairs"]["rtp"]
    assert f"<td>pairs</td><td>{100 * pairs:.3f}%</td>" in page and "<td>behind</td>" in page
    assert "observed RTP far too low" in page


def test_admin_preview_of_edited_pay_tables(admin_client):
    table = PremiumTableFactory()
    url = reverse("admin:tables_table_rtp_preview", args=[table.pk])
    response = admin_client.post(url, {"pay_tables": json.dumps({"pairs": {"perfect_pair": "20"}})})
    assert response.status_code == 200
    pairs = rtp.preview_report("premium", {"pairs": {"perfect_pair": "20"}})["side_bets"]["pairs"]["rtp"]
    assert f"<td>pairs</td><td>{100 * pairs:.3f}%</td>" in response.json()["html"]
    assert admin_client.post(url, {"pay_tables": '{"pairs": {"nope": "2"}}'}).status_code == 400
    assert admin_client.post(url, {"pay_tables": "{not json"}).status_code == 400
    assert admin_client.get(url).status_code == 405
    assert Table.objects.get(pk=table.pk).pay_tables == {}  # nothing saved
