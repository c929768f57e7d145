"""Idempotent demo set-up: currencies, one table per variant and currency with limits per bet type,
and demo players with wallets and deposits (through the ledger's ``post``)."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.db import transaction

from accounts.models import Account, Currency, LedgerTransaction, Player
from accounts.services import Posting, cashier_account, create_player, default_operator, post, wallet_for
from tables.engine import ruleset
from tables.models import Table, TableLimit

D = Decimal
#: ``code: (name, play_for_fun)``; two minor units each.
DEMO_CURRENCIES = {"EUR": ("Euro", False), "USD": ("US dollar", False), "FUN": ("Play-for-fun chips", True)}
#: Limits per bet type: ``(min, max, chip step)`` in the table currency's major units.
LIMITS = {"main": ("1", "500", "1"), "behind": ("1", "250", "1"), "pair": ("1", "50", "1"),
          "pairs": ("1", "50", "1"), "bust_bonus": ("0.5", "25", "0.5"), "lucky_trio": ("0.5", "25", "0.5"),
          "poker_trio": ("0.5", "25", "0.5")}
#: Play-for-fun money can never sit (RULES 9), so nobody can bet behind at a FUN seated table either:
#: one FUN classic table shows the refusals (its rounds deal to no seat), and FUN play is boundless.
FUN_VARIANTS = ("classic", "boundless")
DEPOSIT = D("2000")
#: Every tenth real player starts short: fallbacks (RULES 4) and unseating (RULES 9) happen.
SHORT_DEPOSIT = D("40")


def table_code(variant: str, currency: str) -> str:
    """``CLASSIC-1`` (EUR), ``CLASSIC-USD-1``, ``CLASSIC-FUN-1``."""
    return f"{variant.upper()}-1" if currency == "EUR" else f"{variant.upper()}-{currency}-1"


@transaction.atomic
def ensure_tables(variants, currencies) -> list[Table]:
    """Create (or keep) one open demo table per variant and currency (play-for-fun: ``FUN_VARIANTS``
    only) with ``LIMITS`` for the bet types its variant offers. Returns the tables in (currency,
    variant) order."""
    tables = []
    for code in currencies:
        name, fun = DEMO_CURRENCIES[code]
        Currency.objects.get_or_create(code=code, defaults={"name": name, "minor_units": 2, "play_for_fun": fun})
        for variant in variants:
            if fun and variant not in FUN_VARIANTS:
                continue
            rules = ruleset(variant)
            table, _ = Table.objects.get_or_create(
                code=table_code(variant, code),
                defaults={"name": f"{variant.title()} {code} (demo)", "variant": variant, "currency_id": code,
                          "seats": rules.seats, "penetration": 75})
            for bet_type in sorted(rules.bet_types):
                low, high, step = LIMITS[bet_type]
                TableLimit.objects.get_or_create(table=table, bet_type=bet_type,
                                                 defaults={"min_stake": D(low), "max_stake": D(high),
                                                           "chip_step": D(step)})
            tables.append(table)
    return tables


@dataclass(frozen=True)
class DemoPlayer:
    """A demo player as the simulator sees it: ``code``, ``kind`` (``real``/``trial``/``fun``)."""

    code: str
    kind: str


def _codes(kind: str, count: int) -> list[str]:
    return [f"demo-{kind}-{i:04d}" for i in range(1, count + 1)]


@transaction.atomic
def ensure_players(count: int, currencies, run_tag: str, operator=None) -> dict[str, list[DemoPlayer]]:
    """Make sure ``count`` demo players of ``operator`` (an ``Operator``; default: the default
    operator) exist per currency group, with wallets and a first deposit from its cashier.

    Real-money currencies (EUR/USD) share one group: 80% real accounts (``demo-real-NNNN``, a
    wallet in each real currency, every tenth with a short deposit) and 20% trial accounts
    (``demo-trial-NNNN``). ``FUN``: ``demo-fun-NNNN``, real accounts holding play-for-fun chips.
    Returns ``{currency: [DemoPlayer]}``. First deposits are keyed ``demo-deposit:<code>:<currency>``;
    a later run (``run_tag``: unique per run) tops up wallets below a quarter of their start amount
    (``demo-topup:<code>:<currency>:<run_tag>``)."""
    real_currencies = [c for c in currencies if not DEMO_CURRENCIES[c][1]]
    n_trial = max(1, count // 5) if real_currencies else 0
    groups = {}
    if real_currencies:
        groups["real"] = (_codes("real", count - n_trial) if count > n_trial else [], Player.Kind.REAL, real_currencies)
        groups["trial"] = (_codes("trial", n_trial), Player.Kind.TRIAL, real_currencies)
    if "FUN" in currencies:
        groups["fun"] = (_codes("fun", count), Player.Kind.REAL, ["FUN"])
    operator = operator or default_operator()
    all_codes = [c for codes, _, _ in groups.values() for c in codes]
    players = {p.code: p for p in Player.objects.filter(operator=operator, code__in=all_codes)}
    User = get_user_model()
    missing = [c for c in all_codes if c not in players]
    usernames = {c: operator.game_code(c) for c in missing}
    existing_users = {u.username: u for u in User.objects.filter(username__in=usernames.values())}
    new_users = [User(username=name, password="!") for name in usernames.values()  # "!": no password login
                 if name not in existing_users]
    for user in User.objects.bulk_create(new_users):
        existing_users[user.username] = user
    kind_of = {c: kind for codes, kind, _ in groups.values() for c in codes}
    for code in missing:
        players[code] = create_player(user=existing_users[usernames[code]], code=code, account_kind=kind_of[code],
                                      operator=operator)
    postings = []
    for group, (codes, _, group_currencies) in groups.items():
        for currency in group_currencies:
            wallets = {w.player_id: w for w in Account.objects.filter(
                kind=Account.Kind.WALLET, currency_id=currency, player__in=[players[c] for c in codes])
                .select_related("currency")}
            cashier = cashier_account(currency=currency, operator=operator)
            for i, code in enumerate(codes):
                player = players[code]
                wallet = wallets.get(player.pk) or wallet_for(player=player, currency=currency)
                amount = SHORT_DEPOSIT if group == "real" and i % 10 == 9 else DEPOSIT
                if player.pk not in wallets:
                    key = f"demo-deposit:{player.game_code}:{currency}"
                elif wallet.balance < amount / 4:  # broke after an earlier run: top up to the start amount
                    key, amount = f"demo-topup:{player.game_code}:{currency}:{run_tag}", amount - wallet.balance
                else:
                    continue
                postings.append(Posting(key=key, kind=LedgerTransaction.Kind.DEPOSIT, source=cashier,
                                        destination=wallet, amount=amount, memo="demo deposit"))
    post(postings)
    out = {c: [] for c in currencies}
    for group, (codes, _, group_currencies) in groups.items():
        for currency in group_currencies:
            out[currency] += [DemoPlayer(players[code].game_code, group) for code in codes]
    return out
