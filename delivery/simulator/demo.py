"""Idempotent demo set-up: currencies, one table per variant and currency with limits per bet type,
the demo operators, and their demo players, created and funded as an operator does it (the
operator services: players, then, in transfer mode, transfers into their wallets; a seamless
operator's players keep their money in its own wallet), in bulk: a few statements for thousands
of players."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction

from accounts.models import Account, Currency, LedgerTransaction, Operator, Player
from accounts.operators import create_operator, create_players, players_in_session, transfers_in
from accounts.operators import open_sessions as open_player_sessions
from tables.engine import ruleset
from tables.models import Studio, Table, TableLimit, default_studio
from tables.studios import agree

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
#: The demo operators (``code: (name, wallet mode)``): north and south keep their players' money in
#: the platform's wallets (transfer), east in its own wallet (seamless: the reference operator
#: wallet, ``make wallet-sandbox``). Their players sit at the same tables, and each brand's staff
#: sees only its own.
DEMO_OPERATORS = {"north": ("North Casino", Operator.WalletMode.TRANSFER),
                  "south": ("South Casino", Operator.WalletMode.TRANSFER),
                  "east": ("East Casino", Operator.WalletMode.SEAMLESS)}


def table_code(variant: str, currency: str) -> str:
    """``CLASSIC-1`` (EUR), ``CLASSIC-USD-1``, ``CLASSIC-FUN-1``."""
    return f"{variant.upper()}-1" if currency == "EUR" else f"{variant.upper()}-{currency}-1"


@transaction.atomic
def ensure_tables(variants, currencies) -> list[Table]:
    """Create (or keep) one open demo table per variant and currency (play-for-fun: ``FUN_VARIANTS``
    only) with ``LIMITS`` for the bet types its variant offers. Returns the tables in (currency,
    variant) order."""
    tables = []
    ensure_currencies()
    for code in currencies:
        fun = DEMO_CURRENCIES[code][1]
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


def ensure_currencies() -> list[Currency]:
    """The demo currencies (``DEMO_CURRENCIES``), created if missing."""
    return [Currency.objects.get_or_create(code=code, defaults={"name": name, "minor_units": 2, "play_for_fun": fun})[0]
            for code, (name, fun) in DEMO_CURRENCIES.items()]


def ensure_operators(codes, wallet_url="", wallet_secret="") -> list[Operator]:
    """The operators ``codes``: a demo operator (``DEMO_OPERATORS``) is created if missing, in its
    wallet mode, and may use every demo currency; a seamless one calls the wallet at
    ``wallet_url`` with ``wallet_secret`` (set again on every run: the sandbox may have moved). Any
    other operator must exist (``manage.py create_operator``). Each agrees with the default studio,
    the demo tables' (``tables.studios.agree``): the simulator deals their players as that studio.
    Raises ``ValueError`` for an unknown one."""
    found = {o.code: o for o in Operator.objects.filter(code__in=codes)}
    currencies, studio = ensure_currencies(), Studio.objects.get(pk=default_studio())
    for code in codes:
        if code in DEMO_OPERATORS:
            name, mode = DEMO_OPERATORS[code]
            wallet = {"wallet_url": wallet_url, "wallet_secret": wallet_secret} if mode == mode.SEAMLESS else {}
            if code not in found:
                found[code], _ = create_operator(code=code, name=name, wallet_mode=mode, **wallet)
            elif wallet:
                Operator.objects.filter(pk=found[code].pk).update(**wallet)
                found[code].refresh_from_db()
            found[code].currencies.add(*currencies)
        elif code not in found:
            raise ValueError(f"no operator {code!r}: create it with manage.py create_operator")
        agree(studio=studio, operator=found[code])
    return [found[c] for c in codes]


@dataclass(frozen=True)
class DemoPlayer:
    """A demo player as the simulator sees it: ``code`` (the game code the game server uses),
    ``kind`` (``real``/``trial``/``fun``)."""

    code: str
    kind: str


def _codes(kind: str, count: int) -> list[str]:
    return [f"demo-{kind}-{i:04d}" for i in range(1, count + 1)]


def ensure_players(count: int, currencies, run_tag: str, operators) -> dict[str, list[DemoPlayer]]:
    """Make sure ``count`` demo players exist per currency group, spread over ``operators`` (player
    ``i`` of a group is ``operators[i % n]``'s), created and funded through the operator services
    (``create_players``, then ``transfers_in``: one ``transfer`` in per wallet, each operator's
    at once), as an operator in transfer mode does; a seamless operator's players are only
    created (their money is at its wallet).

    Real-money currencies (EUR/USD) share one group: 80% real accounts (``demo-real-NNNN``, a
    wallet in each real currency, every tenth with a short deposit) and 20% trial accounts
    (``demo-trial-NNNN``). ``FUN``: ``demo-fun-NNNN``, real accounts holding play-for-fun chips.
    Returns ``{currency: [DemoPlayer]}``. First deposits are transfers ``demo-<code>-<currency>``;
    a later run (``run_tag``: unique per run) tops up wallets below a quarter of their start amount
    (``demo-topup-<code>-<currency>-<run_tag>``)."""
    real_currencies = [c for c in currencies if not DEMO_CURRENCIES[c][1]]
    n_trial = max(1, count // 5) if real_currencies else 0
    groups = {}
    if real_currencies:
        groups["real"] = (_codes("real", count - n_trial) if count > n_trial else [], Player.Kind.REAL, real_currencies)
        groups["trial"] = (_codes("trial", n_trial), Player.Kind.TRIAL, real_currencies)
    if "FUN" in currencies:
        groups["fun"] = (_codes("fun", count), Player.Kind.REAL, ["FUN"])
    owner = {code: operators[i % len(operators)] for codes, _, _ in groups.values() for i, code in enumerate(codes)}
    funded = set(LedgerTransaction.objects.filter(key__startswith="transfer:", key__contains=":demo-")
                 .values_list("key", flat=True))
    out, transfers = {c: [] for c in currencies}, {operator.pk: [] for operator in operators}
    for group, (codes, kind, group_currencies) in groups.items():
        players = {}
        for operator in operators:
            players.update(create_players(operator=operator, players={c: kind for c in codes if owner[c] is operator},
                                          currencies=group_currencies))
        balances = {(w.player_id, w.currency_id): w.balance for w in Account.objects.filter(
            kind=Account.Kind.WALLET, operator__in=operators, currency__in=group_currencies)}
        for i, code in enumerate(codes):
            operator, player = owner[code], players[code]
            amount = SHORT_DEPOSIT if group == "real" and i % 10 == 9 else DEPOSIT
            for currency in group_currencies:
                if operator.wallet_mode == Operator.WalletMode.TRANSFER:
                    transfers[operator.pk] += _funding(operator, player, currency, amount, balances, funded, run_tag)
                out[currency].append(DemoPlayer(player.game_code, group))
    for operator in operators:
        if transfers[operator.pk]:
            transfers_in(operator=operator, transfers=transfers[operator.pk])
    return out


def _funding(operator, player, currency, amount, balances, funded, run_tag):
    """The transfer in (``[(transfer id, player code, currency, amount)]``, empty or one) that
    ``player``'s wallet in ``currency`` needs: its first deposit ``demo-<code>-<currency>``, once;
    later, the top-up of a wallet below a quarter of ``amount``
    (``demo-topup-<code>-<currency>-<run_tag>``)."""
    first = f"demo-{player.code}-{currency}"
    if f"transfer:{operator.code}:{first}" not in funded:
        return [(first, player.code, currency, amount)]
    balance = balances[player.pk, currency]
    if balance < amount / 4:  # broke after an earlier run: top it up
        return [(f"demo-topup-{player.code}-{currency}-{run_tag}", player.code, currency, amount - balance)]
    return []


def open_sessions(pool) -> int:
    """Open a session of the player API for every player of ``pool`` (``ensure_players``'s
    ``{currency: [DemoPlayer]}``) in that currency, as its operator does when the player comes to
    play (``accounts.operators.open_sessions``: each operator's at once); a player with a live
    session in it keeps that one. The game server takes bets only from players in session.
    Returns the number opened."""
    opened = 0
    for currency, players in pool.items():
        found = list(Player.objects.filter(game_code__in=[p.code for p in players]).select_related("operator"))
        live = players_in_session([p.pk for p in found], currency)
        by_operator = {}
        for player in found:
            if player.pk not in live:
                by_operator.setdefault(player.operator_id, (player.operator, []))[1].append(player.code)
        for operator, codes in by_operator.values():
            opened += len(open_player_sessions(operator=operator, players=codes, currency=currency))
    return opened
