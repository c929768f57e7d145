"""``{% load money_format %}``: ``{{ amount|money:currency }}`` -> ``1,234.00`` and
``{{ amount|money_code:currency }}`` -> ``1,234.00 EUR`` (``adminkit.money``)."""

from django import template

from adminkit.money import format_money

register = template.Library()


@register.filter
def money(amount, currency=None):
    """``amount`` in US format with ``currency``'s minor units (a Currency or an int)."""
    return format_money(amount, currency)


@register.filter
def money_code(amount, currency=None):
    """As ``money``, with the currency code after the amount."""
    return format_money(amount, currency, code=True)
