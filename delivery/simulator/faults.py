"""Faults (RULES 10) injected into a share of the rounds, each through the platform's services:

- ``suspend``:   betting closed, then the round is suspended and resumed; it plays on.
- ``cancel``:    the round is played (extra stakes taken), then suspended and cancelled: voided,
                 every stake refunded, extras included; at classic tables one in three is a host
                 disconnection (the whole shoe is reshuffled).
- ``misread``:   a card's suit is misread, scanned and recorded so (values unchanged: the record
                 stays valid, side bets may settle differently); once settled, and before its table
                 deals on from the shoe, the correct record is resettled
                 (``settlement.services.resettle_round``): the shoe then counts the card dealt.
- ``duplicate``: the settle task is delivered twice (``settle_round.delay`` again).
"""
from __future__ import annotations

import random
from collections import Counter

from tables.engine import SUITS

KINDS = ("suspend", "cancel", "misread", "duplicate")


def pick(rng: random.Random, rate: float) -> str | None:
    """The fault of the next round (one of ``KINDS``), or None for most rounds."""
    return rng.choice(KINDS) if rng.random() < rate else None


def host_disconnects(rng: random.Random, rules) -> bool:
    """Whether a cancelled round is a host disconnection: one in three, at the tables where it
    reshuffles the shoe (``rules``: a ``RuleSet``; classic, RULES 10)."""
    return rules.reshuffle_on_host_disconnect and rng.random() < 1 / 3


def misread_place(dealt: dict) -> str:
    """Where a misread round's misread card goes (``dealt``: ``{destination: [cards]}`` dealt so
    far): the first player hand (the shared hand, else the lowest seat dealt), the dealer's at an
    empty table. Its first card is the one misread."""
    if "player" in dealt:
        return "player"
    seats = sorted(int(to.removeprefix("seat:")) for to in dealt if to.startswith("seat:"))
    return f"seat:{seats[0]}" if seats else "dealer"


def misread_card(card: str, rng: random.Random, out: Counter) -> str:
    """``card`` as misread: another suit (same rank: every action stays legal), one of which fewer
    than 8 are ``out`` of the shoe (the cards its rounds dealt so far): the 8-copies limit is kept."""
    rank, suit = card[:-1], card[-1]
    return rank + rng.choice([s for s in SUITS if s != suit and out[rank + s] < 8])
