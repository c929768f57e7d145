"""Operators and what they bring: their API keys, their players, the players' sessions of the
player API, and (transfer mode) the money they move in and out of the platform's wallets.

Plain functions with keyword arguments, each in one database transaction; the operator is always
given (the operator API's key names it), so one operator never reaches another's players: another
operator's player is an unknown player. Money is ``Decimal`` (or a decimal string) in the
currency's major units with its minor-unit decimals.
"""

import hashlib
import re
import secrets
from collections import Counter
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.encoding import escape_uri_path

from .exceptions import (
    AccountKindInUse,
    BalanceLimit,
    CurrencyNotAllowed,
    IdempotencyConflict,
    InvalidRequest,
    UnknownPlayer,
    UnknownSession,
    WalletKept,
    WrongWalletMode,
)
from .locks import lock_operator, lock_wallets
from .models import (
    Account,
    Currency,
    LedgerTransaction,
    Operator,
    OperatorAPICall,
    OperatorAPIKey,
    Player,
    PlayerSession,
)
from .money import TRANSFER_BALANCE_LIMIT, amount_string, parse_amount
from .selectors import wallets_of
from .services import Posting, cashier_account, deposit, post, wallet_for, withdraw

#: A player code or transfer id as operators send them: letters, digits and ``. _ -``, 1-64.
CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def _checked_code(value, what):
    if not isinstance(value, str) or not CODE.fullmatch(value):
        raise InvalidRequest(f"{what}: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
    return value


# --- operators and keys ---------------------------------------------------------------------------

@transaction.atomic(durable=True)
def create_operator(*, code, name="", wallet_mode=Operator.WalletMode.TRANSFER, currencies=(), wallet_url="",
                    wallet_secret="", wallet_timeout_ms=3000, time_zone=None, key_name="first key"):
    """Create operator ``code`` (a slug) in ``wallet_mode`` with ``currencies`` (codes of existing
    currencies), counting its days in ``time_zone`` (an IANA name; default
    ``settings.OPERATOR_TIME_ZONE``), and its first API key. Returns ``(Operator, raw key)``: the raw key is shown once
    and never stored. Raises ``django.core.exceptions.ValidationError`` (a bad code, a seamless
    operator without wallet URL and secret, an unknown zone, a currency named twice),
    ``Currency.DoesNotExist``."""
    if twice := repeated(currencies):
        raise ValidationError({"currencies": f"{', '.join(twice)} given more than once"})
    operator = Operator(code=code, name=name or code, wallet_mode=wallet_mode, wallet_url=wallet_url,
                        wallet_secret=wallet_secret, wallet_timeout_ms=wallet_timeout_ms,
                        **({"time_zone": time_zone} if time_zone else {}))
    operator.full_clean()
    operator.save()
    operator.currencies.set([Currency.objects.get(code=c) for c in currencies])
    _, key = create_api_key(operator=operator, name=key_name)
    return operator, key


def create_api_key(*, operator, name):
    """A new API key of ``operator``: ``(OperatorAPIKey, raw key)``; the raw key is shown once."""
    return OperatorAPIKey.objects.create_key(operator=operator, name=name[:50] or "key")


def revoke_api_key(*, key):
    """Revoke ``key`` (an ``OperatorAPIKey``) for good; returns it."""
    key.revoked = True
    key.save(update_fields=["revoked"])
    return key


def record_call(*, key, method, path, status):
    """Write the audit row of one operator API call made with ``key`` (an ``OperatorAPIKey``):
    ``method`` (cut to 8 characters), ``path`` (escaped as a URI, so a NUL or ``%`` in it is
    stored as ``%00`` / ``%25``; cut to 255 characters) and the HTTP ``status`` answered.
    Returns the ``OperatorAPICall``."""
    return OperatorAPICall.objects.create(key=key, operator_id=key.operator_id, method=method[:8],
                                          path=escape_uri_path(path)[:255], status=status)


# --- players --------------------------------------------------------------------------------------

def repeated(codes):
    """The codes ``codes`` (currency codes) names more than once, sorted; empty when none."""
    return sorted(code for code, n in Counter(codes).items() if n > 1)


def _currencies(operator, codes):
    allowed = {c.code: c for c in operator.currencies.all()}
    if not isinstance(codes, (list, tuple)) or not all(isinstance(c, str) for c in codes):
        raise InvalidRequest("currencies: a list of currency codes is required")
    if twice := repeated(codes):
        raise InvalidRequest(f"currencies: {', '.join(twice)} given more than once")
    refused = sorted(set(codes) - allowed.keys())
    if refused:
        raise CurrencyNotAllowed(f"operator {operator.code} may not use {', '.join(refused)}")
    return [allowed[c] for c in codes]


@transaction.atomic(durable=True)
def upsert_player(*, operator, code, has_open_bets, account_kind=Player.Kind.REAL, currencies=(), display_name=""):
    """Create ``operator``'s player ``code``, or update it to the whole state given: ``account_kind``
    (``real`` / ``trial``, RULES 9), ``display_name``, and a wallet in each of ``currencies`` (codes
    the operator may use). A wallet once opened stays: an update's ``currencies`` name every
    currency the player holds a wallet in (``WalletKept`` otherwise). A real player becomes a trial
    one only while no real wallet of theirs holds money (as the platform knows it) and
    ``has_open_bets(player)`` (the game's answer: a bet of theirs is still open) is false
    (``AccountKindInUse``). Returns ``(Player, created)``. Raises ``InvalidRequest``,
    ``CurrencyNotAllowed``, ``WalletKept``, ``AccountKindInUse``; nothing is written then."""
    _checked_code(code, "code")
    if account_kind not in Player.Kind.values:
        raise InvalidRequest(f"account_kind: one of {', '.join(Player.Kind.values)}")
    if not isinstance(display_name, str) or len(display_name) > 100 or "\x00" in display_name:
        raise InvalidRequest("display_name: a text of at most 100 characters")
    wanted = _currencies(operator, currencies)
    lock_operator(operator.pk)  # one writer of an operator's players at a time: no duplicate user
    player = Player.objects.filter(operator=operator, code=code).first()
    created = player is None
    if created:
        game_code = operator.game_code(code)
        user = get_user_model().objects.create_user(username=f"player:{game_code}"[:150], password=None)
        player = Player.objects.create(user=user, operator=operator, code=code, game_code=game_code,
                                       account_kind=account_kind, display_name=display_name)
    else:
        _check_update(player, account_kind, wanted, has_open_bets)
    if not created and (player.account_kind, player.display_name) != (account_kind, display_name):
        player.account_kind, player.display_name = account_kind, display_name
        player.save(update_fields=["account_kind", "display_name"])
    for currency in wanted:
        wallet_for(player=player, currency=currency)
    return player, created


def _check_update(player, account_kind, wanted, has_open_bets):
    """Raise ``WalletKept`` or ``AccountKindInUse`` when ``player`` cannot be updated to
    ``account_kind`` with wallets in ``wanted`` (``Currency`` rows), as ``upsert_player`` says."""
    wallets = list(wallets_of(player))
    if kept := sorted({w.currency_id for w in wallets} - {c.code for c in wanted}):
        raise WalletKept(f"the player holds wallets in {', '.join(kept)}, which stay: name every currency of "
                         "the player's wallets")
    if player.account_kind != Player.Kind.REAL or account_kind != Player.Kind.TRIAL:
        return
    if held := [w for w in wallets if not w.currency.play_for_fun and w.known_balance]:
        money = ", ".join(f"{amount_string(w.balance, w.currency.minor_units)} {w.currency_id}" for w in held)
        raise AccountKindInUse(f"the player holds real money ({money}): a real player becomes a trial one "
                               "without it")
    if has_open_bets(player):
        raise AccountKindInUse("a bet of the player is still open: a real player becomes a trial one once "
                               "their bets are settled")


#: Rows per statement of the bulk services (``create_players``, ``open_sessions``).
BATCH = 5000


@transaction.atomic(durable=True)
def create_players(*, operator, players, currencies=()):
    """Create those of ``operator``'s players ``players`` (``{code: account_kind}``) it does not hold
    yet, each as ``upsert_player`` creates one (a Django user ``player:<game code>`` without a
    usable password, the ``Player``, a wallet in each of ``currencies``: codes the operator may
    use), and open the wallets among ``currencies`` that the players it holds lack; the players
    found are left as they are otherwise. A few statements per ``BATCH`` players, whatever their
    number (a simulation's thousands). Returns ``{code: Player}`` of every code of ``players``.
    Raises ``InvalidRequest``, ``CurrencyNotAllowed``; nothing is written then."""
    for code, account_kind in players.items():
        _checked_code(code, "code")
        if account_kind not in Player.Kind.values:
            raise InvalidRequest(f"account_kind: one of {', '.join(Player.Kind.values)}")
    wanted = _currencies(operator, currencies)
    lock_operator(operator.pk)  # one writer of an operator's players at a time: no duplicate user
    codes = list(players)
    found = {p.code: p for i in range(0, len(codes), BATCH)
             for p in Player.objects.filter(operator=operator, code__in=codes[i:i + BATCH])}
    new = [code for code in codes if code not in found]
    user_model = get_user_model()
    users = user_model.objects.bulk_create(
        [user_model(username=user_model.normalize_username(f"player:{operator.game_code(code)}"[:150]),
                    password=make_password(None)) for code in new], batch_size=BATCH)
    found.update(zip(new, Player.objects.bulk_create(
        [Player(user=user, operator=operator, code=code, game_code=operator.game_code(code), account_kind=players[code])
         for user, code in zip(users, new)], batch_size=BATCH)))
    held = set(Account.objects.filter(kind=Account.Kind.WALLET, operator=operator, currency__in=wanted)
               .values_list("player_id", "currency_id"))
    journal = operator.wallet_mode == Operator.WalletMode.SEAMLESS
    Account.objects.bulk_create([Account(kind=Account.Kind.WALLET, player=player, currency=currency, operator=operator,
                                         journal=journal)
                                 for player in found.values() for currency in wanted
                                 if (player.pk, currency.pk) not in held], batch_size=BATCH)
    return {code: found[code] for code in codes}


def player_of(operator, code):
    """``operator``'s player ``code``; ``UnknownPlayer`` if it has none (whatever other operators have),
    also for a value that is no player code (``CODE``), which is looked up nowhere."""
    valid = isinstance(code, str) and CODE.fullmatch(code)
    player = Player.objects.filter(operator=operator, code=code).first() if valid else None
    if player is None:
        raise UnknownPlayer(f"no player {str(code)[:64]!r}")
    return player


def balances(operator, player):
    """The wallets of ``operator``'s player ``player`` (its code), with their currencies, by
    currency code. Raises ``WrongWalletMode`` (a seamless operator: its players' balances are its
    own), ``UnknownPlayer``."""
    _check_transfer_mode(operator)
    return wallets_of(player_of(operator, player))


def _wallet_currency(player, currency):
    """``player``'s wallet in ``currency`` (a code), its currency loaded, else ``CurrencyNotAllowed``."""
    wallet = player.wallets.filter(currency_id=currency).select_related("currency").first() \
        if isinstance(currency, str) else None
    if wallet is None:
        raise CurrencyNotAllowed(f"player {player.code} holds no {str(currency)[:8]} wallet")
    return wallet


# --- sessions -------------------------------------------------------------------------------------

def token_hash(token):
    """The stored form of a session token: SHA-256 hex of it."""
    return hashlib.sha256(token.encode()).hexdigest()


@transaction.atomic(durable=True)
def open_session(*, operator, player, currency):
    """A session of the player API for ``operator``'s player ``player`` (its code) in ``currency``
    (a code the player holds a wallet in), ending after ``PLAYER_SESSION_LIFETIME_SECONDS`` or
    ``PLAYER_SESSION_IDLE_SECONDS`` without use. Returns ``(PlayerSession, token)``: the token is
    shown once, only its hash is stored. Raises ``UnknownPlayer``, ``CurrencyNotAllowed``."""
    found = player_of(operator, player)
    wallet = _wallet_currency(found, currency)
    token = secrets.token_urlsafe(32)
    now = timezone.now()
    session = PlayerSession.objects.create(
        token_hash=token_hash(token), player=found, currency=wallet.currency, last_used_at=now,
        expires_at=now + timedelta(seconds=settings.PLAYER_SESSION_LIFETIME_SECONDS))
    return session, token


@transaction.atomic(durable=True)
def open_sessions(*, operator, players, currency):
    """``open_session`` for each of ``operator``'s players ``players`` (codes) in ``currency``: their
    sessions written in a few statements, whatever their number. Returns ``{code: token}``. Raises
    ``UnknownPlayer``, ``CurrencyNotAllowed``; nothing is written then."""
    codes = sorted(set(players))
    found = {p.code: p for i in range(0, len(codes), BATCH)
             for p in Player.objects.filter(operator=operator, code__in=codes[i:i + BATCH])}
    held = set(Account.objects.filter(kind=Account.Kind.WALLET, operator=operator, currency_id=currency)
               .values_list("player_id", flat=True))
    for code in codes:
        if code not in found:
            raise UnknownPlayer(f"no player {str(code)[:64]!r}")
        if found[code].pk not in held:
            raise CurrencyNotAllowed(f"player {code} holds no {str(currency)[:8]} wallet")
    tokens = {code: secrets.token_urlsafe(32) for code in codes}
    now = timezone.now()
    lifetime = timedelta(seconds=settings.PLAYER_SESSION_LIFETIME_SECONDS)
    PlayerSession.objects.bulk_create([
        PlayerSession(token_hash=token_hash(tokens[code]), player=found[code], currency_id=currency,
                      last_used_at=now, expires_at=now + lifetime) for code in codes], batch_size=BATCH)
    return tokens


def revoke_session(*, operator, token):
    """End the session of ``token`` now (an operator's player's; idempotent). Returns it. Raises
    ``UnknownSession`` for a token of no session of ``operator``'s players."""
    session = (PlayerSession.objects.filter(token_hash=token_hash(token), player__operator=operator).first()
               if isinstance(token, str) else None)
    if session is None:
        raise UnknownSession("no such session")
    if session.revoked_at is None:
        session.revoked_at = timezone.now()
        session.save(update_fields=["revoked_at"])
    return session


def session_is_live(session, now=None):
    """True while ``session`` is usable: not revoked, before ``expires_at``, and used within
    ``PLAYER_SESSION_IDLE_SECONDS``."""
    now = now or timezone.now()
    idle = timedelta(seconds=settings.PLAYER_SESSION_IDLE_SECONDS)
    return session.revoked_at is None and now < session.expires_at and now < session.last_used_at + idle


#: A session's ``last_used_at`` is written again once it is this old: a request does not write.
TOUCH_EVERY = timedelta(seconds=60)


def players_in_session(player_ids, currency, now=None):
    """The ids (a set) of the players among ``player_ids`` who hold a live session
    (``session_is_live``) in ``currency`` (a code): the players their operators let play now.
    Their sessions count as used now (``last_used_at`` written at most once per ``TOUCH_EVERY``)."""
    now = now or timezone.now()
    live = PlayerSession.objects.filter(
        player_id__in=list(player_ids), currency_id=currency, revoked_at__isnull=True, expires_at__gt=now,
        last_used_at__gt=now - timedelta(seconds=settings.PLAYER_SESSION_IDLE_SECONDS))
    found = set(live.values_list("player_id", flat=True))
    if found:
        live.filter(last_used_at__lt=now - TOUCH_EVERY).update(last_used_at=now)
    return found


def touch_session(session, now=None):
    """Record that ``session`` was used now (at most one write per ``TOUCH_EVERY``); returns it."""
    now = now or timezone.now()
    if now - session.last_used_at >= TOUCH_EVERY:
        PlayerSession.objects.filter(pk=session.pk, last_used_at__lt=now).update(last_used_at=now)
        session.last_used_at = now
    return session


# --- transfers ------------------------------------------------------------------------------------

class Direction:
    IN, OUT = "in", "out"


def _check_transfer_mode(operator):
    """``WrongWalletMode`` unless ``operator`` keeps its players' money in the platform's wallets."""
    if operator.wallet_mode != Operator.WalletMode.TRANSFER:
        raise WrongWalletMode(f"operator {operator.code} is in {operator.wallet_mode} mode: its players' money "
                              "stays in its own wallet")


@transaction.atomic(durable=True)
def transfer(*, operator, transfer_id, player, currency, amount, direction):
    """Move ``amount`` into (``direction`` ``in``: from the operator's cashier) or out of (``out``)
    the wallet of ``operator``'s player ``player`` in ``currency``, under ledger key
    ``transfer:<operator>:<transfer_id>`` (``transfer_id``: the operator's, 1-64 characters). The
    same ``transfer_id`` with the same body again moves nothing and returns the first transfer,
    also when sent while the first is still being written (the wallet is locked first, so the
    retry waits for it and then finds it).
    Returns ``(LedgerTransaction, entry, created)``: ``entry`` is the transfer's ``LedgerEntry`` on
    the wallet (signed ``amount``, ``balance_after``; its account with the account's player and
    currency loaded), ``created`` is False for a replay. Raises ``WrongWalletMode`` (a seamless
    operator), ``InvalidRequest`` (the id, the direction), ``UnknownPlayer``,
    ``CurrencyNotAllowed``, ``InvalidAmount``, ``InsufficientFunds`` (``out`` beyond the balance),
    ``BalanceLimit`` (``in`` to ``accounts.money.TRANSFER_BALANCE_LIMIT`` or beyond),
    ``IdempotencyConflict`` (the id used for another body)."""
    _check_transfer_mode(operator)
    _checked_code(transfer_id, "transfer_id")
    if direction not in (Direction.IN, Direction.OUT):
        raise InvalidRequest("direction: 'in' or 'out'")
    found = player_of(operator, player)
    wallet = _wallet_currency(found, currency)
    value = parse_amount(amount, wallet.currency.minor_units)
    key = f"transfer:{operator.code}:{transfer_id}"
    locked = lock_wallets({found.pk}, wallet.currency)[found.pk]  # a concurrent retry of this key waits here
    created = not LedgerTransaction.objects.filter(key=key).exists()
    if created and direction == Direction.IN and locked.balance + value >= TRANSFER_BALANCE_LIMIT:
        raise BalanceLimit(f"a transfer in may bring a wallet below "
                           f"{amount_string(TRANSFER_BALANCE_LIMIT, wallet.currency.minor_units)}, "
                           f"not to {amount_string(locked.balance + value, wallet.currency.minor_units)}")
    move = deposit if direction == Direction.IN else withdraw
    try:
        txn = move(wallet=wallet, amount=value, key=key, memo=f"{operator.code} transfer {transfer_id}")
    except IdempotencyConflict:  # the ledger's sentence names its posting key: the operator's names its id
        raise IdempotencyConflict(f"transfer_id {transfer_id!r} was already used for another transfer (another "
                                  "player, currency, amount or direction): nothing was moved") from None
    entry = txn.entries.get(account=wallet)
    entry.account = wallet
    return txn, entry, created


@transaction.atomic(durable=True)
def transfers_in(*, operator, transfers):
    """``transfer`` in (``direction`` ``in``) of many: ``transfers`` (``[(transfer_id, player code,
    currency code, amount)]``), each the same ledger transaction ``transfer`` writes (key
    ``transfer:<operator>:<transfer_id>``, a deposit from the operator's cashier, its memo), all
    posted at once (``accounts.services.post``: a few statements, whatever their number; a
    ``transfer_id`` already posted with the same body moves nothing again). Returns the
    ``LedgerTransaction`` of each, in order. Raises what ``transfer`` raises; nothing is written
    then."""
    _check_transfer_mode(operator)
    codes = sorted({player for _, player, _, _ in transfers})
    players = {p.pk: p.code for i in range(0, len(codes), BATCH)
               for p in Player.objects.filter(operator=operator, code__in=codes[i:i + BATCH])}
    wallets = {(players[w.player_id], w.currency_id): w for w in Account.objects.filter(
        kind=Account.Kind.WALLET, operator=operator, currency__in={c for _, _, c, _ in transfers})
        .select_related("currency") if w.player_id in players}
    cashiers, postings = {}, []
    for transfer_id, code, currency, amount in transfers:
        _checked_code(transfer_id, "transfer_id")
        wallet = wallets.get((code, currency))
        if wallet is None:
            if code not in players.values():
                raise UnknownPlayer(f"no player {str(code)[:64]!r}")
            raise CurrencyNotAllowed(f"player {code} holds no {str(currency)[:8]} wallet")
        if currency not in cashiers:
            cashiers[currency] = cashier_account(currency=currency, operator=operator)
        postings.append(Posting(key=f"transfer:{operator.code}:{transfer_id}", kind=LedgerTransaction.Kind.DEPOSIT,
                                source=cashiers[currency], destination=wallet,
                                amount=parse_amount(amount, wallet.currency.minor_units),
                                memo=f"{operator.code} transfer {transfer_id}"))
    return post(postings)
