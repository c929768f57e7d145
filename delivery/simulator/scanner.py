"""The card scanner of one round at a demo table (RULES 10): it reports the cards dealt so far to
the round's timeline (``report_play``) when a decision needs them (an extra stake is checked
against the cards scanned) and at the end of the round; a misread round's misread card
(``faults``) is reported, and recorded, as misread."""
from __future__ import annotations

import copy

from tables.services import report_play

from . import faults
from .calls import call


class Scanner:
    """Reports the cards of round ``round_pk``. ``misread``: ``card -> card as misread``
    (``faults.misread_card``) for the round's misread card, or None (no misread)."""

    def __init__(self, round_pk: int, misread=None):
        self.round_pk, self.misread = round_pk, misread
        self.reported: dict = {}  # destination -> cards as read
        self.wrong: tuple | None = None  # (destination, card as misread)

    def report(self, dealt: dict) -> None:
        """Report the cards of ``dealt`` (``{destination: [cards]}``, e.g. ``RoundPlay.dealt``) not
        reported yet, in one call."""
        place = faults.misread_place(dealt) if self.misread and self.wrong is None else None
        events = []
        for to, cards in dealt.items():
            read = self.reported.setdefault(to, [])
            for card in cards[len(read):]:
                if to == place and not read:
                    card = self.misread(card)
                    self.wrong = (to, card)
                read.append(card)
                events.append({"kind": "card_scanned", "card": card, "to": to})
        if events:
            call(report_play, round_id=self.round_pk, events=events)

    def hand_as_read(self, to: str, cards: list, first: bool) -> list:
        """A hand's ``cards`` dealt to ``to`` as the scanner read them (what the game server names):
        the first hand there (``first``) starts with the place's first card, maybe misread."""
        if self.wrong is None or self.wrong[0] != to or not first:
            return list(cards)
        return [self.wrong[1], *cards[1:]]

    def as_read(self, record: dict) -> dict:
        """``record`` (the round's record, all its cards reported) as the scanner read it: a copy
        with the misread card, or ``record`` itself."""
        if self.wrong is None:
            return record
        read = copy.deepcopy(record)
        to, card = self.wrong
        hand = read["player_cards"] if to == "player" else read["dealer"] if to == "dealer" else \
            read["seats"][to.removeprefix("seat:")]["cards"]
        hand[0] = card
        return read
