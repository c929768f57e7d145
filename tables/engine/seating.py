"""Who sits where, and what a seat stake does (RULES 6, 9): seats at classic and premium tables,
bets behind, premium's mirrored stakes on a player's two seats, unseating.

The functions answer with a reason (a sentence) or None; the platform turns a reason into its
error. Money is ``Decimal`` in the currency's major units.
"""
from __future__ import annotations

from decimal import ROUND_DOWN, Decimal

from .rules import RuleSet


def may_take_seat(*, trial: bool, play_for_fun: bool) -> bool:
    """RULES 9: trial accounts and play-for-fun money never occupy a seat (they bet behind and play
    boundless)."""
    return not trial and not play_for_fun


def why_no_seat(rules: RuleSet, *, seats_held: int, behind_any: bool) -> str | None:
    """None if a player may take one more, free seat, else the reason (RULES 6, 9): ``seats_held``
    seats already (classic 1, premium 2 at most), or betting behind where a seated player may not
    (classic). Taking a seat one bets behind is refused by ``why_no_bet_behind``."""
    if seats_held >= (rules.seats_per_player or 0):
        return f"a player holds at most {rules.seats_per_player} seat(s) in {rules.variant}"
    if behind_any and not rules.seated_may_bet_behind:
        return f"a player betting behind may not take a seat in {rules.variant}"
    return None


def why_no_bet_behind(rules: RuleSet, *, own_seat: bool, seats_held: int) -> str | None:
    """None if a player may bet behind an occupied seat (or keep betting behind the seat they are
    taking), else the reason (RULES 6): never behind one's own seat (premium), never while seated
    where seated players may not (classic)."""
    if not rules.bet_behind:
        return f"{rules.variant} tables take no bets behind"
    if own_seat:
        return "a player never bets behind their own seat"
    if seats_held and not rules.seated_may_bet_behind:
        return f"a seated player may not bet behind in {rules.variant}"
    return None


def why_no_pair_bet(bet_type: str, *, own_seat: bool, behind_seat: bool) -> str | None:
    """None if a player may place a ``bet_type`` side bet (``pair``, ``pairs``) on a seat, else the
    reason (RULES 8): the player seated there places it (``own_seat``), or a player betting behind
    that seat (``behind_seat``, a bet behind placed before it), nobody else."""
    if own_seat or behind_seat:
        return None
    return f"a {bet_type} bet goes on one's own seat or on a seat one bets behind"


def mirrored_stakes(stake: Decimal, *, available: Decimal | None, step: Decimal, minimum: Decimal | None
                    ) -> tuple[Decimal, Decimal]:
    """RULES 9 (premium): a stake added on one of a player's two seats is mirrored on the other if
    ``available`` (the player's balance; None: covering both, the balance being the wallet's to
    tell) covers both; otherwise it is split equally between them, each half rounded DOWN to the
    table's chip ``step`` [decision]. Returns the two seats' stakes. Raises ``ValueError`` when a
    half is below the table ``minimum`` (or nothing)."""
    if available is None or available >= 2 * stake:
        return stake, stake
    half = half_stake(stake, step)
    if half <= 0 or (minimum is not None and half < minimum):
        raise ValueError(f"{stake} split over two seats is below the minimum")
    return half, half


def half_stake(stake: Decimal, step: Decimal) -> Decimal:
    """Each seat's share of a premium stake split over two seats: half of ``stake`` rounded DOWN to
    the chip ``step`` (RULES 9 [decision])."""
    return (stake / 2 / step).to_integral_value(rounding=ROUND_DOWN) * step


def seats_emptied(rules: RuleSet, *, seats_with_bets: set[int], seats_with_seat_bet: set[int]) -> set[int]:
    """RULES 6: the seats emptied when betting closes (a seat without a valid seat bet); every bet
    behind and pair(s) bet on them is refunded. An empty set at a shared-hand table (no seats)."""
    return set() if rules.shared_hand else seats_with_bets - seats_with_seat_bet


def unseated_after(rules: RuleSet, rounds_without_bet: int) -> bool:
    """RULES 9: a seated player who places no seat bet keeps the seat for that round (one round of
    grace) and is unseated when it happens again in the next: True once ``rounds_without_bet``
    (rounds in a row without a seat bet, this one included) reaches 2."""
    return rounds_without_bet >= 2


def keeps_seat(balance: Decimal | None, minimum: Decimal | None) -> bool:
    """RULES 9: a seated player whose balance is below the table minimum when a round starts is
    unseated (no minimum, or a balance the platform does not know: always kept [decision])."""
    return minimum is None or balance is None or balance >= minimum
