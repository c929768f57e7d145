"""``python manage.py create_operator CODE``: a new operator with its first API key (printed last)."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts.models import Currency, Operator
from accounts.operators import create_operator


class Command(BaseCommand):
    help = ("Create an operator (a casino brand) in transfer or seamless wallet mode, with the currencies its "
            "players may use, and print its first operator API key on the last line (shown once).")

    def add_arguments(self, parser):
        parser.add_argument("code", help="the operator's code (a slug, no colon; unique whatever its case)")
        parser.add_argument("--name", default="", help="its name (default: the code)")
        parser.add_argument("--wallet", choices=Operator.WalletMode.values, default=Operator.WalletMode.TRANSFER,
                            help="transfer: the platform's wallets; seamless: the operator's own wallet")
        parser.add_argument("--wallet-url", default="", help="seamless: the operator wallet's base URL")
        parser.add_argument("--wallet-secret", default="", help="seamless: the HMAC secret the calls are signed with")
        parser.add_argument("--wallet-timeout-ms", type=int, default=3000, help="seamless: each call's timeout")
        parser.add_argument("--currencies", default="", help="comma-separated currency codes, e.g. EUR,USD")
        parser.add_argument("--time-zone", default="", help="the IANA zone its reporting days are counted in "
                                                            "(default: the setting OPERATOR_TIME_ZONE)")

    def handle(self, *args, **o):
        currencies = [c.strip() for c in o["currencies"].split(",") if c.strip()]
        known = Currency.objects.filter(code__in=currencies).values_list("code", flat=True)
        if unknown := set(currencies) - set(known):
            raise CommandError(f"unknown currencies: {', '.join(sorted(unknown))}")
        if Operator.objects.filter(code__iexact=o["code"]).exists():
            raise CommandError(f"operator {o['code']} exists already")
        try:
            operator, key = create_operator(code=o["code"], name=o["name"], wallet_mode=o["wallet"],
                                            currencies=currencies, wallet_url=o["wallet_url"],
                                            wallet_secret=o["wallet_secret"], wallet_timeout_ms=o["wallet_timeout_ms"],
                                            time_zone=o["time_zone"] or None)
        except ValidationError as e:
            raise CommandError("; ".join(f"{field}: {' '.join(errors)}"
                                         for field, errors in e.message_dict.items())) from None
        self.stdout.write(f"operator {operator.code} ({operator.wallet_mode}), currencies: "
                          f"{', '.join(currencies) or 'none'}; its first API key (shown once):")
        self.stdout.write(key)
