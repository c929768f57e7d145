"""``{% load timeline %}``: ``{{ event|event_line:currency }}``: a round event (anything with
``kind`` and a JSON ``payload``) as one readable line for a replay's timeline, e.g.
``Bet placed: bet 12, record b0, player brand:alpha-p0, main, seat 2, stake 10.00``: money with
the currency's minor units (``adminkit.money``), lists and mappings spelled out, never a Python
dict."""

from django import template

from adminkit.money import format_money

register = template.Library()

#: Payload keys that hold an amount (a decimal string).
MONEY_KEYS = frozenset({"stake", "staked", "returned", "refunded", "amount", "needed", "balance"})
#: Payload keys shown as their value alone (what they are reads from the value).
BARE_KEYS = frozenset({"type"})


def _value(key, value, currency):
    if isinstance(value, dict):
        return ", ".join(f"{k} {_value(key, v, currency)}" for k, v in value.items()) or "none"
    if isinstance(value, list | tuple):
        return ", ".join(_value(key, v, currency) for v in value) or "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key in MONEY_KEYS or key == "differences":
        shown = format_money(value, currency)
        return f"+{shown}" if key == "differences" and not shown.startswith("-") else shown
    return str(value)


@register.filter
def event_line(event, currency=None):
    """``event`` as ``"<Kind>: key value, ..."`` (its payload's ``None`` and empty values left out)."""
    parts = []
    for key, value in (event.payload or {}).items():
        if value is None or value == "" or value == [] or value == {}:
            continue
        shown = _value(key, value, currency)
        parts.append(shown if key in BARE_KEYS else f"{key.replace('_', ' ')} {shown}")
    label = str(event.kind).replace("_", " ").capitalize()
    return f"{label}: {', '.join(parts)}" if parts else label
