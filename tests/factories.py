"""factory-boy factories shared by the test suites.

``PlayerFactory(funded="100.00")`` gives a player with a wallet in ``currency`` (default EUR)
credited through the ledger; ``fund(player, amount, currency)`` tops one up. ``operator_with_players``
gives an operator, its key and its players through the operator services; players in session
(``in_session``) have their operator agree with the default studio (``agree``). ``TableFactory``
builds a table of any variant (``ClassicTableFactory``, ``PremiumTableFactory``,
``BoundlessTableFactory``) with limits for every bet type it offers; ``RoundFactory`` opens a
round through ``tables.services.open_round``.
"""

import itertools
from decimal import Decimal

import factory
from django.contrib.auth import get_user_model

from accounts.models import Currency, Operator, Player, PlayerSession
from accounts.operators import create_operator, open_session, transfer, upsert_player
from accounts.services import default_operator, deposit, wallet_for
from tables import studios
from tables.engine import ruleset
from tables.models import Studio, Table, TableLimit, default_studio
from tables.services import open_round
from wagering.selectors import has_open_bets

_deposits = itertools.count(1)


class CurrencyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Currency
        django_get_or_create = ("code",)

    code = "EUR"
    name = factory.LazyAttribute(lambda o: o.code)
    minor_units = 2
    play_for_fun = False


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()

    username = factory.Sequence(lambda n: f"user{n}")


def fund(player, amount, currency="EUR"):
    """Deposit ``amount`` (decimal string) into ``player``'s wallet in ``currency`` (a code of an
    existing currency) and make sure the player has a live session in it (``in_session``): the
    game server may seat them. Returns the wallet."""
    wallet = wallet_for(player=player, currency=currency)
    deposit(wallet=wallet, amount=amount, key=f"test-deposit:{next(_deposits)}:{player.pk}")
    wallet.refresh_from_db()
    in_session(player, currency)
    return wallet


def in_session(player, currency="EUR"):
    """A live session of ``player`` (who holds a wallet in ``currency``) in ``currency``, opened by
    its operator (``accounts.operators.open_session``) unless one is open, and its operator's
    agreement with the default studio (every factory table's: ``agree``); returns the session's
    raw token (None when one was already open)."""
    agree(player.operator)
    if PlayerSession.objects.filter(player=player, currency_id=currency, revoked_at__isnull=True).exists():
        return None
    return open_session(operator=player.operator, player=player.code, currency=currency)[1]


def agree(operator, studio=None):
    """``operator``'s agreement with ``studio`` (a ``Studio`` or its code; default: the default
    studio, every factory table's), made if missing: the studio's game server may bet for its players."""
    return studios.agree(studio=studio or Studio.objects.get(pk=default_studio()), operator=operator)


class PlayerFactory(factory.django.DjangoModelFactory):
    """A player; ``funded="100.00"`` deposits that much in EUR (``funded__currency="FUN"`` for
    another currency, created if missing)."""

    class Meta:
        model = Player
        skip_postgeneration_save = True

    user = factory.SubFactory(UserFactory)
    operator = factory.LazyFunction(default_operator)
    code = factory.Sequence(lambda n: f"p-{n}")
    game_code = factory.LazyAttribute(lambda player: player.operator.game_code(player.code))
    account_kind = Player.Kind.REAL

    @factory.post_generation
    def funded(obj, create, extracted, currency="EUR", **kwargs):
        if create and extracted is not None:
            CurrencyFactory(code=currency)
            fund(obj, extracted, currency)


def operator_with_players(code, players=(), *, currencies=("EUR",), funded=None,
                          wallet_mode=Operator.WalletMode.TRANSFER):
    """Operator ``code`` (``accounts.operators.create_operator``) using ``currencies`` (created if
    missing), in ``wallet_mode`` (seamless: with a made-up wallet URL and secret), and its players
    ``players`` (codes), each with a wallet in every currency and, in transfer mode, ``funded`` (a
    decimal string) transferred into each, and a live session in each currency. Returns
    ``(Operator, raw API key, {code: Player})``."""
    for currency in currencies:
        CurrencyFactory(code=currency)
    wallet = {"wallet_url": f"https://{code}.example/wallet", "wallet_secret": "s3cret"} \
        if wallet_mode == Operator.WalletMode.SEAMLESS else {}
    operator, key = create_operator(code=code, wallet_mode=wallet_mode, currencies=currencies, **wallet)
    found = {}
    for player in players:
        found[player], _ = upsert_player(operator=operator, code=player, currencies=list(currencies),
                                          has_open_bets=has_open_bets)
        for currency in currencies if funded and wallet_mode == Operator.WalletMode.TRANSFER else ():
            transfer(operator=operator, transfer_id=f"fund-{player}-{currency}", player=player, currency=currency,
                     amount=funded, direction="in")
        for currency in currencies:
            in_session(found[player], currency)
    return operator, key, found


class TableFactory(factory.django.DjangoModelFactory):
    """A table (default premium) in EUR with limits for every bet type of its variant:
    ``limits={"main": ("1.00", "1000.00", "1.00"), ...}`` overrides (min, max, chip step)."""

    class Meta:
        model = Table
        skip_postgeneration_save = True

    code = factory.Sequence(lambda n: f"t-{n}")
    name = factory.LazyAttribute(lambda o: f"Table {o.code}")
    variant = "premium"
    currency = factory.SubFactory(CurrencyFactory)
    seats = factory.LazyAttribute(lambda o: ruleset(o.variant).seats)

    @factory.post_generation
    def limits(obj, create, extracted, **kwargs):
        given = extracted or {}
        for bet_type in sorted(ruleset(obj.variant).bet_types):
            low, high, step = given.get(bet_type, ("1.00", "1000.00", "1.00"))
            TableLimit.objects.create(table=obj, bet_type=bet_type, min_stake=Decimal(low),
                                      max_stake=Decimal(high), chip_step=Decimal(step))


class ClassicTableFactory(TableFactory):
    variant = "classic"


class PremiumTableFactory(TableFactory):
    variant = "premium"


class BoundlessTableFactory(TableFactory):
    variant = "boundless"


class RoundFactory(factory.Factory):
    """An OPEN round opened through ``open_round`` on ``table`` (default a new premium table)."""

    class Meta:
        model = dict

    table = factory.SubFactory(TableFactory)
    external_id = factory.Sequence(lambda n: f"R-{n}")
    shoe = 1
    burn_count = 2  # a new shoe's burn (RULES 1: an ace shown); a round on an open shoe reads none

    @classmethod
    def _create(cls, model_class, table, external_id, shoe, burn_count):
        return open_round(table_code=table.code, external_id=external_id, shoe=shoe, burn_count=burn_count,
                          actor="test")


#: The password of ``make_operator``'s users.
OPERATOR_PASSWORD = "operator-pass-1"


def make_operator(role, username=None):
    """A staff user in ``role`` (a group name from ``adminkit.roles``), password ``OPERATOR_PASSWORD``."""
    from django.contrib.auth import get_user_model

    from adminkit.roles import ensure_roles

    user = get_user_model().objects.create_user(username=username or role.lower().replace(" ", "_"),
                                                password=OPERATOR_PASSWORD, is_staff=True)
    user.groups.add(ensure_roles()[role])
    return user


def scan(round_id, record):
    """Report ``record``'s cards as scanned to round ``round_id`` (CLOSED), as the studio's scanner
    does while dealing (``tables.cards.scan_events``): a record must hold the cards scanned. The
    cards already reported (``deal``) are left out."""
    from tables.cards import round_cards, scan_events
    from tables.services import report_play

    if events := scan_events(record, reported=round_cards(round_id)):
        report_play(round_id=round_id, events=events, actor="test")


def deal(round_id, record, more=None, *, hole_card=True):
    """Report the initial deal of ``record`` (a round record of round ``round_id``, CLOSED) as
    scanned, what a studio has dealt when decisions begin: each seat's (or the shared hand's) first
    two cards and the dealer's up card, and the hole card where there is one (RULES 3); without it
    (``hole_card=False``) what is out while insurance is decided, before the peek. ``more``:
    ``{destination: number of cards}`` dealt by then to a place (a seat's cards after a split).
    Cards already reported are left out."""
    from tables.cards import record_cards, round_cards
    from tables.engine import ruleset
    from tables.services import report_play

    cards, reported = record_cards(record), round_cards(round_id)
    dealer = 2 if hole_card and ruleset(record["variant"]).hole_card else 1
    dealt = {to: 2 for to in cards} | {"dealer": dealer} | (more or {})
    events = [{"kind": "card_scanned", "card": card, "to": to}
              for to, n in dealt.items() for card in cards[to][len(reported.get(to, [])):n]]
    if events:
        report_play(round_id=round_id, events=events, actor="test")


def totp_device(user):
    """``user``'s confirmed TOTP device (created if missing), as the admin's enrolment leaves it."""
    from django_otp.plugins.otp_totp.models import TOTPDevice

    return (TOTPDevice.objects.filter(user=user, confirmed=True).first()
            or TOTPDevice.objects.create(user=user, name="test", confirmed=True))


def totp_code(device, offset=0):
    """The code ``device`` shows now (``offset`` steps later)."""
    from django_otp.oath import totp

    return str(totp(device.bin_key, device.step, device.t0, device.digits, device.drift + offset)).zfill(device.digits)


def otp_login(client, user):
    """Sign ``user`` in on the test ``client`` as the admin requires: a session verified by a
    confirmed TOTP device (``django_otp.login``'s session key). Returns the client."""
    from django_otp import DEVICE_ID_SESSION_KEY

    device = totp_device(user)
    client.force_login(user)
    session = client.session
    session[DEVICE_ID_SESSION_KEY] = device.persistent_id
    session.save()
    return client
