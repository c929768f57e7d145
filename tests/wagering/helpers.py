"""Helpers of the wagering tests."""

from decimal import Decimal

from accounts.models import Account, LedgerTransaction
from tables.models import Seat


def balance(player, currency="EUR"):
    """The player's wallet balance (``Decimal``), 0 without a wallet."""
    wallet = Account.objects.filter(kind="wallet", player=player, currency=currency).first()
    return wallet.balance if wallet else Decimal(0)


def keys(prefix):
    """Ledger transaction keys starting with ``prefix``."""
    return set(LedgerTransaction.objects.filter(key__startswith=prefix).values_list("key", flat=True))


def sit(table, number, player):
    """Put ``player`` on seat ``number`` (as if seated in an earlier round)."""
    Seat.objects.update_or_create(table=table, number=number, defaults={"player": player})


def show_up_card(round_, card="AS"):
    """Report the dealer's up card of ``round_`` (CLOSED) as scanned: insurance is offered on it."""
    from tables.services import report_play

    report_play(round_id=round_.pk, events=[{"kind": "card_scanned", "card": card, "to": "dealer"}], actor="test")


def deal_hand(round_, cards, to="player", dealer=("9S", "7D"), insure=()):
    """Report the initial deal of ``round_`` (CLOSED) as scanned, as a studio deals it before any
    decision: ``cards[0]`` to ``to``, the dealer's up card, the hand's other ``cards`` to ``to``, then
    the hole card at a table that has one (premium, boundless): the cards a double or split names.
    ``insure``: record ids of bets that take insurance on the up card, before the hole card is
    reported (RULES 3: insurance is decided before the peek)."""
    from tables.services import report_play
    from wagering.extras import add_extra_stakes

    def scan(events):
        report_play(round_id=round_.pk, events=[{"kind": "card_scanned", "card": c, "to": t} for c, t in events],
                    actor="test")

    scan([(cards[0], to), (dealer[0], "dealer")] + [(c, to) for c in cards[1:]])
    if insure:
        add_extra_stakes(round_id=round_.pk, extras=[{"bet": b, "kind": "insurance"} for b in insure])
    if round_.table.rules().hole_card:
        scan([(dealer[1], "dealer")])
