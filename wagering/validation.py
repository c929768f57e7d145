"""Type checks of the game server's bet and extra-stake requests, before anything reaches the
database: one place for a single request and each item of a batch (``wagering.placement`` /
``wagering.extras``). Strings are checked for NUL characters too (PostgreSQL's text refuses them):
a NUL is a 400 ``invalid_input``, never a database error.
"""

import math

from accounts.exceptions import InvalidAmount
from tables.exceptions import InvalidInput
from tables.validation import unknown_keys

from .models import Bet, BetExtra

#: The most items one batch request (``{"bets": [...]}``, ``{"extras": [...]}``) may carry.
MAX_BATCH = 5000

#: ``#mirror`` (``wagering.placement.MIRROR``) is appended to a premium bet's key and record id for
#: its mirrored bet.
MIRROR_SUFFIX = len("#mirror")
KEY_MAX = Bet._meta.get_field("idempotency_key").max_length - MIRROR_SUFFIX
RECORD_ID_MAX = Bet._meta.get_field("record_id").max_length - MIRROR_SUFFIX
PLAYER_MAX = Bet._meta.get_field("player").related_model._meta.get_field("code").max_length


def _known_keys(request, keys, what):
    """Raise ``InvalidInput`` naming the keys of ``request`` (a dict) beyond ``keys`` (the first 10,
    each cut to 64 characters); ``what`` names the request in the sentence."""
    unknown = unknown_keys(request, keys)
    if unknown:
        raise InvalidInput("; ".join(f"{key}: unknown field" for key in unknown) + f" ({what} holds {', '.join(keys)})")


def _string(name, value, max_length, *, required=True):
    if value is None and not required:
        return
    if not isinstance(value, str) or (required and not value):
        raise InvalidInput(f"{name}: a {'non-empty ' if required else ''}string is required")
    if len(value) > max_length:
        raise InvalidInput(f"{name}: at most {max_length} characters")
    if "\x00" in value:
        raise InvalidInput(f"{name}: must not contain NUL characters")


#: The keys a bet request may hold.
BET_KEYS = ("key", "player", "type", "stake", "seat", "record_id")


def check_bet_request(request, *, amounts_as_strings=False):
    """Raise ``InvalidInput`` (or ``InvalidAmount``) unless ``request`` (a bet request of
    ``place_bets``) has the right types: strings for ``key``, ``player``, ``type``, ``stake`` (a
    ``Decimal`` or ``int`` too, from Python callers, unless ``amounts_as_strings``: the API) and
    ``record_id`` (or null), an int or null for ``seat`` (not a bool, not a float; which seats
    exist is the seat rules' ``seat_not_allowed``), and no key beyond ``BET_KEYS``."""
    if not isinstance(request, dict):
        raise InvalidInput("each bet must be an object")
    _known_keys(request, BET_KEYS, "a bet")
    _string("key", request.get("key"), KEY_MAX)
    if request["key"] != request["key"].strip():
        raise InvalidInput("key: a key has no leading or trailing whitespace (nor is it blank)")
    _string("player", request.get("player"), PLAYER_MAX)
    _string("type", request.get("type"), 32)
    _string("record_id", request.get("record_id"), RECORD_ID_MAX, required=False)
    seat = request.get("seat")
    if seat is not None and type(seat) is not int:  # not a bool, not 2.0; 1-7: the seat rules (seat_not_allowed)
        raise InvalidInput("seat: an integer 1-7 or null is required")
    if amounts_as_strings and not isinstance(request.get("stake"), str):
        raise InvalidAmount('stake: a decimal string such as "10.00" is required')


#: The keys an extra-stake request may hold.
EXTRA_KEYS = ("bet", "kind", "hand", "cards")


def check_extra_request(request):
    """Raise ``InvalidInput`` unless ``request`` (an extra-stake request of ``add_extra_stakes``)
    has the right types: ``bet`` and ``kind`` strings, ``hand`` an int (not a bool), ``cards`` null
    or a list of short strings; no key beyond ``EXTRA_KEYS``."""
    if not isinstance(request, dict):
        raise InvalidInput("each extra stake must be an object")
    _known_keys(request, EXTRA_KEYS, "an extra stake")
    _string("bet", request.get("bet"), Bet._meta.get_field("record_id").max_length)
    _string("kind", request.get("kind"), BetExtra._meta.get_field("kind").max_length)
    hand = request.get("hand", 1)
    if type(hand) is not int:
        raise InvalidInput("hand: 1 or 2 is required")
    cards = request.get("cards")
    if cards is not None:
        if not isinstance(cards, list) or len(cards) > 32:
            raise InvalidInput("cards: a list of card codes is required")
        for card in cards:
            _string("cards[]", card, 8)


def json_safe(value):
    """``value`` (a field of a rejected request) as it goes into a ``bet_rejected`` event: JSON
    scalars as they are (``null`` stays null), strings cut to 200 characters and NUL characters
    replaced, a float that is not finite (``jsonb`` has no infinity) or anything else as its (cut,
    NUL-free) ``str``."""
    if value is None or isinstance(value, (bool, int)) or (isinstance(value, float) and math.isfinite(value)):
        return value if not isinstance(value, int) or abs(value) < 10**18 else str(value)[:200]
    text = value if isinstance(value, str) else str(value)
    return text[:200].replace("\x00", "\ufffd")


def well_typed(check, request):
    """True if ``check`` (a check of this module) passes ``request``."""
    try:
        check(request)
    except (InvalidInput, InvalidAmount):
        return False
    return True
