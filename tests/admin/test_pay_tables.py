"""A table's pay tables edited as odds per pattern (``tables.pay_tables_form``): pre-filled with
the odds in force beside the default, validated input by input, stored as overrides only."""

from decimal import Decimal

import pytest
from django.contrib import admin
from django.forms.models import model_to_dict
from django.test import RequestFactory

from tables.admin import TableAdmin
from tables.models import Table
from tables.pay_tables_form import PayTablesField
from tests.factories import PremiumTableFactory, UserFactory

pytestmark = pytest.mark.django_db


def _form(table, odds=None):
    """The table page's form of ``table``; bound to its fields and the ``odds`` inputs
    (``{"<bet>__<pattern>": "odds"}``) when given."""
    request = RequestFactory().get("/")
    request.user = UserFactory(is_staff=True, is_superuser=True)
    form_class = TableAdmin(Table, admin.site).get_form(request, table, change=True)
    if odds is None:
        return form_class(instance=table)
    data = {k: v for k, v in model_to_dict(table).items() if v is not None and k != "pay_tables"}
    data.update({f"pay_tables__{key}": value for key, value in odds.items()})
    return form_class(data=data, instance=table)


def test_the_form_shows_one_odds_input_per_pattern_with_its_default():
    table = PremiumTableFactory(pay_tables={"pairs": {"mixed_pair": "6"}})
    html = str(_form(table)["pay_tables"])
    assert 'name="pay_tables__pairs__mixed_pair"' in html and 'value="6"' in html
    assert 'name="pay_tables__pairs__perfect_pair"' in html and "30:1" in html  # the default beside it
    assert "textarea" not in html


def test_odds_are_stored_as_the_overrides_that_differ_from_the_default():
    table = PremiumTableFactory()
    form = _form(table, {"pairs__perfect_pair": "35", "pairs__mixed_pair": "5", "main__win": ""})
    assert form.is_valid(), form.errors
    form.save()
    assert Table.objects.get(pk=table.pk).pay_tables == {"pairs": {"perfect_pair": "35"}}  # 5:1 is the default


@pytest.mark.parametrize("odds, error", [
    ("abc", "is not a number"), ("0", "more than 0"), ("-2", "more than 0"), ("1.23456", "at most 4 decimals"),
    ("NaN", "more than 0")])
def test_bad_odds_are_refused_naming_the_input(odds, error):
    table = PremiumTableFactory()
    form = _form(table, {"pairs__perfect_pair": odds})
    assert not form.is_valid()
    assert any(error in e and "pairs perfect_pair" in e for e in form.errors["pay_tables"]), form.errors
    assert Table.objects.get(pk=table.pk).pay_tables == {}


def test_a_pattern_the_variant_does_not_have_is_refused():
    field = PayTablesField(variant="premium")
    with pytest.raises(Exception, match="not a pattern of premium"):
        field.clean({"pairs__nope": "2"})
    assert field.clean({"pairs__perfect_pair": "12.5"}) == {"pairs": {"perfect_pair": str(Decimal("12.5"))}}


def _page_form(table, odds, reason=""):
    from settlement.admin import TablePage

    request = RequestFactory().get("/")
    request.user = UserFactory(is_staff=True, is_superuser=True)
    page, table = TablePage(Table, admin.site), Table.objects.get(pk=table.pk)  # as the page reads it
    form_class = page.get_form(request, table, change=True)
    data = {k: v for k, v in model_to_dict(table).items() if v is not None and k != "pay_tables"}
    data.update({f"pay_tables__{key}": value for key, value in odds.items()}, pay_tables_reason=reason)
    return page, request, form_class(data=data, instance=table)


def test_a_pay_table_change_needs_a_reason_and_is_in_the_exception_report():
    from settlement.models import ExceptionEntry, OperatorAction

    table = PremiumTableFactory()
    page, request, form = _page_form(table, {"pairs__perfect_pair": "35"})
    assert not form.is_valid() and "The odds changed" in str(form.errors["pay_tables_reason"])
    page, request, form = _page_form(table, {"pairs__perfect_pair": "35"}, reason="promotion week")
    assert form.is_valid(), form.errors
    page.save_model(request, form.save(commit=False), form, change=True)
    line = ExceptionEntry.objects.get(kind=ExceptionEntry.Kind.PAY_TABLES)
    assert line.operator is None and line.table == table and line.action.reason == "promotion week"
    assert line.before["pay_tables"]["pairs"]["perfect_pair"] == "30"
    assert line.after["pay_tables"]["pairs"]["perfect_pair"] == "35"
    assert OperatorAction.objects.get(action="edit_pay_tables").actor == request.user
    page, request, form = _page_form(table, {"pairs__perfect_pair": "35"})  # unchanged: no reason asked
    assert form.is_valid(), form.errors
