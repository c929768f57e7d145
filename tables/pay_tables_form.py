"""A table's pay tables as the table page edits them: one odds field per pattern of the variant's
pay tables (``N`` of ``N:1``), pre-filled with the odds in force beside the variant's default,
validated field by field (a strictly positive decimal with at most four decimals); the engine
then checks the whole (``Table.clean``). What is stored is only the overrides: the odds that
differ from the default."""

from decimal import Decimal, InvalidOperation

from django import forms
from django.core.exceptions import ValidationError

from .engine import ruleset

#: Separates the bet type and the pattern in an odds input's name (``pay_tables__pairs__mixed_pair``).
SEPARATOR = "__"
#: Decimals an odds value may have (the money columns' storage: ``accounts.models.MONEY``).
ODDS_PLACES = 4


def _defaults(variant):
    """``{bet type: {pattern: Decimal odds}}`` of ``variant``'s default pay tables."""
    return ruleset(variant).pay_tables


class PayTablesWidget(forms.Widget):
    """A table of odds inputs, one row per (bet type, pattern) of ``variant``'s pay tables."""

    template_name = "tables/pay_tables_widget.html"
    variant = None

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        value = value if isinstance(value, dict) else {}
        posted = any(SEPARATOR in key for key in value)  # a form shown again: its inputs as typed
        rows = []
        for bet_type, table in (_defaults(self.variant) if self.variant else {}).items():
            for pattern, default in table.items():
                if posted:
                    entered = value.get(f"{bet_type}{SEPARATOR}{pattern}", "")
                else:
                    entered = (value.get(bet_type) or {}).get(pattern, "")
                rows.append({"bet_type": bet_type, "pattern": pattern, "default": default,
                             "name": f"{name}{SEPARATOR}{bet_type}{SEPARATOR}{pattern}",
                             "value": "" if entered is None else str(entered)})
        context["widget"].update(rows=rows, variant=self.variant)
        return context

    def value_from_datadict(self, data, files, name):
        prefix = f"{name}{SEPARATOR}"
        return {key[len(prefix):]: data[key] for key in data if key.startswith(prefix)}

    def value_omitted_from_data(self, data, files, name):
        return not any(key.startswith(f"{name}{SEPARATOR}") for key in data)


class PayTablesField(forms.Field):
    """The odds inputs (``PayTablesWidget``) cleaned to the overrides ``{bet type: {pattern:
    "odds"}}``: a blank input or the default's odds is no override. Raises a ``ValidationError``
    naming each input that is not a strictly positive decimal of at most ``ODDS_PLACES``
    decimals."""

    widget = PayTablesWidget

    def __init__(self, *, variant=None, **kwargs):
        super().__init__(required=False, **kwargs)
        self.variant = self.widget.variant = variant

    def prepare_value(self, value):
        return value if isinstance(value, dict) else {}

    def has_changed(self, initial, data):
        try:
            return self.clean(data) != (initial or {})
        except ValidationError:
            return True

    def clean(self, value):
        if not self.variant:
            return {}
        defaults = _defaults(self.variant)
        overrides, errors = {}, []
        for key, raw in (value or {}).items():
            bet_type, _, pattern = key.partition(SEPARATOR)
            text = str(raw).strip()
            if not text:
                continue
            if bet_type not in defaults or pattern not in defaults[bet_type]:
                errors.append(f"{bet_type} {pattern}: not a pattern of {self.variant}")
                continue
            try:
                odds = Decimal(text)
            except InvalidOperation:
                errors.append(f"{bet_type} {pattern}: {text!r} is not a number")
                continue
            if not odds.is_finite() or odds <= 0:
                errors.append(f"{bet_type} {pattern}: odds must be more than 0 (N of N:1)")
            elif -odds.as_tuple().exponent > ODDS_PLACES:
                errors.append(f"{bet_type} {pattern}: at most {ODDS_PLACES} decimals")
            elif odds != defaults[bet_type][pattern]:
                overrides.setdefault(bet_type, {})[pattern] = str(odds)
        if errors:
            raise ValidationError(errors)
        return overrides
