"""``python manage.py run_tables``: the table simulator (a stand-in game server), then its report
on stdout; the libraries' warnings during the run come after it on stderr, each once with its count."""

import warnings
from collections import Counter

from django.core.management.base import BaseCommand, CommandError

from accounts.models import Operator
from delivery.simulator.config import CURRENCIES, VARIANTS, SimConfig
from delivery.simulator.demo import DEMO_OPERATORS
from delivery.simulator.report import build_report, format_report
from delivery.simulator.runner import run_simulation


def _names(value, allowed):
    names = tuple(v.strip() for v in value.split(",") if v.strip())
    if not names or set(names) - set(allowed):
        raise CommandError(f"choose from {', '.join(allowed)}, not {value!r}")
    return names


class Command(BaseCommand):
    help = ("Deal rounds at demo tables (one per variant and currency) through the wagering and "
            "settlement services, with faults, then print the RTP report and reconcile the ledger.")

    def add_arguments(self, parser):
        d = SimConfig()
        parser.add_argument("--rounds", type=int, default=d.rounds, help="rounds per table")
        parser.add_argument("--players", type=int, default=d.players, help="players around each classic/premium table")
        parser.add_argument("--boundless-players", type=int, default=d.boundless_players,
                            help="players at each boundless table")
        parser.add_argument("--variants", default=",".join(d.variants), help=f"subset of {','.join(VARIANTS)}")
        parser.add_argument("--currencies", default=",".join(d.currencies), help=f"subset of {','.join(CURRENCIES)}")
        parser.add_argument("--seed", type=int, default=None, help="seed for a repeatable run")
        parser.add_argument("--fault-rate", type=float, default=d.fault_rate,
                            help="share of rounds with a fault (suspend, cancel, misread, duplicate settle)")
        parser.add_argument("--drift-rounds", type=int, default=d.drift_rounds,
                            help="first N rounds per table from a dealer-favouring shoe (RTP drift)")
        parser.add_argument("--deviate", type=float, default=d.deviate, help="share of decisions off basic strategy")
        parser.add_argument("--timeout", type=float, default=d.timeout, help="share of decisions timed out")
        parser.add_argument("--settle-timeout", type=float, default=d.settle_timeout,
                            help="seconds to wait for the workers to settle")
        parser.add_argument("--operator", default=",".join(d.operators),
                            help="operators whose players are dealt, comma-separated (default: the demo operators, "
                                 "created if missing; any other must exist: manage.py create_operator)")
        parser.add_argument("--wallet-url", default=d.wallet_url,
                            help="the seamless demo operator east's wallet (default: make wallet-sandbox's)")
        parser.add_argument("--wallet-secret", default=d.wallet_secret, help="... and its secret")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args, **o):
        try:
            config = SimConfig(rounds=o["rounds"], players=o["players"], boundless_players=o["boundless_players"],
                               variants=_names(o["variants"], VARIANTS), currencies=_names(o["currencies"], CURRENCIES),
                               seed=o["seed"], fault_rate=o["fault_rate"], drift_rounds=o["drift_rounds"],
                               deviate=o["deviate"], timeout=o["timeout"], settle_timeout=o["settle_timeout"],
                               operators=tuple(c.strip() for c in o["operator"].split(",") if c.strip()),
                               wallet_url=o["wallet_url"], wallet_secret=o["wallet_secret"])
        except ValueError as e:
            raise CommandError(str(e)) from None
        known = set(Operator.objects.filter(code__in=config.operators).values_list("code", flat=True))
        if unknown := set(config.operators) - known - DEMO_OPERATORS.keys():
            raise CommandError(f"no operator {', '.join(sorted(unknown))}: create it with manage.py create_operator")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = run_simulation(config, progress=not o["no_progress"])
        report = build_report(result.stats.rounds, {g.table.code: g.table for g in result.games.values()})
        self.stdout.write(format_report(report, result))
        seen = Counter(f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in caught)
        for text, n in seen.items():
            self.stderr.write(f"warning during the run ({n}x): {text}")
        if not result.settled:
            raise CommandError(f"rounds still waiting for settlement after {config.settle_timeout:.0f} s")
        if not result.delivered:
            raise CommandError(f"seamless movements still pending after {config.wallet_timeout:.0f} s: is the "
                               f"operator's wallet at {config.wallet_url} up (make wallet-sandbox)?")
        if not report.reconcile.ok:
            raise CommandError("the ledger does not reconcile")
