"""The bets a table's players ask for in one round (RULES 6, 8, 9): who sits down, who sits out,
who bets behind, which side bets (only those offered in this shoe round), stakes within the
table's limits. Requests are ``wagering.placement.place_bets`` dicts; the platform decides."""
from __future__ import annotations

import random
from collections import defaultdict
from decimal import Decimal

#: Stakes as multiples of a bet type's minimum, small ones most often.
MULTIPLES = (1, 1, 1, 2, 2, 5, 5, 10, 20, 50)


class BetMaker:
    """Bet requests for the rounds of one table.

    Args:
      table: the ``Table``; ``rules``: its ``RuleSet``; ``limits``: ``{bet_type: TableLimit}``.
      players: the ``DemoPlayer`` list around the table; ``rng``: the table's ``random.Random``.

    Each request gets a unique idempotency ``key`` (``<table>:<round>:<n>``) and ``record_id`` ``b<n>``.
    """

    def __init__(self, table, rules, limits, players, rng: random.Random):
        self.table, self.rules, self.limits, self.players, self.rng = table, rules, limits, players, rng
        self.round = None
        self.count = 0

    def start(self, external_id: str) -> None:
        """Begin the requests of round ``external_id``."""
        self.round, self.count = external_id, 0

    def stake(self, bet_type: str) -> Decimal:
        """A random stake for ``bet_type`` within its limit, on the chip step (Decimal)."""
        limit = self.limits[bet_type]
        stake = min(limit.min_stake * self.rng.choice(MULTIPLES), limit.max_stake)
        return stake - stake % limit.chip_step

    def request(self, player: str, bet_type: str, seat: int | None = None) -> dict:
        """One bet request of ``player`` (code) with a random stake."""
        self.count += 1
        return {"key": f"{self.table.code}:{self.round}:{self.count}", "record_id": f"b{self.count}",
                "player": player, "type": bet_type, "seat": seat, "stake": self.stake(bet_type)}

    def side_types(self, shoe_round: int) -> list[str]:
        """Side bets offered in ``shoe_round`` (RULES 8), per seat in classic/premium."""
        return [t for t in sorted(self.rules.bet_types) if t not in ("main", "behind")
                and self.rules.offered(t, shoe_round)]

    def seat_bets(self, seats: dict) -> list[dict]:
        """Seat bets for a classic/premium round. ``seats``: ``{number: player code or None}``.

        A seated player bets on their seat (premium: one request, mirrored on their second seat by
        the platform; sometimes they take a second, free seat), or sits the round out (1 in 10: one
        round of grace, RULES 9). Free seats are offered to players standing around; trial and
        play-for-fun accounts try too and are refused (they bet behind instead)."""
        rng, out = self.rng, []
        held = defaultdict(list)
        for number, code in sorted(seats.items()):
            if code:
                held[code].append(number)
        free_seats = [n for n, code in sorted(seats.items()) if not code]
        for code, numbers in held.items():
            if rng.random() < 0.1:
                continue
            seat = numbers[0]
            if self.rules.seats_per_player == 2 and len(numbers) == 1 and free_seats and rng.random() < 0.15:
                seat = free_seats.pop(rng.randrange(len(free_seats)))
            out.append(self.request(code, "main", seat))
        standing = [p.code for p in self.players if p.code not in held]
        rng.shuffle(standing)
        for seat in free_seats:
            if standing and rng.random() < 0.6:
                out.append(self.request(standing.pop(), "main", seat))
        return out

    def behind_and_side_bets(self, occupied: dict, seated: set, refused: list, shoe_round: int) -> list[dict]:
        """Bets on the seats that have a seat bet this round. ``occupied``: ``{seat: owner code}``;
        ``seated``: codes of every seated player; ``refused``: codes just refused a seat (they all
        bet behind). Behind bets (RULES 6: premium seated players too, never on their own seat)
        and per-seat pair(s) side bets by owners and backers."""
        rng, out = self.rng, []
        if not occupied:
            return out
        sides = self.side_types(shoe_round)
        for seat, owner in sorted(occupied.items()):
            for t in sides:
                if rng.random() < 0.35:
                    out.append(self.request(owner, t, seat))
        backers = list(refused) + [p.code for p in self.players if p.code not in seated and p.code not in refused
                                   and rng.random() < 0.3]
        if self.rules.seated_may_bet_behind:
            backers += [code for code in sorted(seated) if rng.random() < 0.1]
        for code in backers:
            seats = [s for s, owner in occupied.items() if owner != code]
            if not seats:
                continue
            seat = rng.choice(sorted(seats))
            out.append(self.request(code, "behind", seat))
            for t in sides:
                if rng.random() < 0.2:
                    out.append(self.request(code, t, seat))
        return out

    def boundless_bets(self, shoe_round: int) -> list[dict]:
        """Boundless: most players bet the main hand; side bets offered this shoe round, with or
        without a main bet (RULES 7, 8)."""
        rng, out = self.rng, []
        sides = self.side_types(shoe_round)
        for p in self.players:
            if rng.random() < 0.85:
                out.append(self.request(p.code, "main"))
            for t in sides:
                if rng.random() < 0.2:
                    out.append(self.request(p.code, t))
        return out
