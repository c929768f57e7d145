"""Studios, their game-server service accounts (``StudioAPIKey``) and their agreements with
operators (``StudioAgreement``): a service account acts on its own studio's tables and their
rounds only; another studio's table or round is answered as one that does not exist
(``NotFound``, the same sentence); it bets only for the players of the operators its studio has an
agreement with."""

import secrets

from django.db import transaction

from .exceptions import NotFound
from .models import Round, Studio, StudioAgreement, StudioAPIKey, Table


def studio_table(studio, code):
    """``studio``'s table ``code`` (a ``Table`` with its currency and limits); ``NotFound`` when
    there is none, whatever other studios have."""
    table = (Table.objects.select_related("currency").prefetch_related("limits")
             .filter(studio=studio, code=code).first()) if isinstance(code, str) else None
    if table is None:
        raise NotFound(f"no table {str(code)[:64]!r}")
    return table


def check_studio_round(studio, round_id):
    """``NotFound`` (``no round <id>``, as for a round that does not exist) unless round
    ``round_id`` (an int) is at one of ``studio``'s tables."""
    if not Round.objects.filter(pk=round_id, table__studio=studio).exists():
        raise NotFound(f"no round {round_id}")


def agree(*, studio, operator):
    """The agreement of ``operator`` (an ``Operator``) with ``studio`` (a ``Studio`` or its code, in any case),
    made if missing: the operator's players may bet at the studio's tables. Returns the
    ``StudioAgreement``. Raises ``Studio.DoesNotExist``."""
    if not isinstance(studio, Studio):
        studio = Studio.objects.get(code__iexact=studio)
    return StudioAgreement.objects.get_or_create(studio=studio, operator=operator)[0]


def agreed_operators(studio_id, operator_ids):
    """The ids of ``operator_ids`` (a set of ints) whose operators have an agreement with studio
    ``studio_id``: a set."""
    return set(StudioAgreement.objects.filter(studio_id=studio_id, operator_id__in=list(operator_ids))
               .values_list("operator_id", flat=True))


@transaction.atomic
def create_service_key(*, studio, name, signed=False):
    """A new game-server service account of ``studio`` (a ``Studio`` or its code, in any case): ``(StudioAPIKey,
    raw key, signing secret)``. ``signed``: every request of the key must be signed
    (``delivery.api.game.signing``) with the returned secret ("" when not signed). The key and
    the secret are shown once: only the key's hash is kept, and the secret on no page. Raises
    ``Studio.DoesNotExist``."""
    if not isinstance(studio, Studio):
        studio = Studio.objects.get(code__iexact=studio)
    key, raw = StudioAPIKey.objects.create_key(studio=studio, name=name[:50] or "game server")
    secret = ""
    if signed:
        secret = secrets.token_urlsafe(32)
        key.signing_secret = secret
        key.save(update_fields=["signing_secret"])
    return key, raw, secret


def revoke_service_key(*, key):
    """Revoke ``key`` (a ``StudioAPIKey``) for good; its next request is a 401. Returns it."""
    key.revoked = True
    key.save(update_fields=["revoked"])
    return key
