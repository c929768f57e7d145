"""Dealer final-hand probabilities from a shoe given as counts of ten ranks (RULES 1, 2, 3).

A shoe is a 10-tuple of counts: index 0 = ace, 1..8 = two..nine, 9 = ten-values (T, J, Q, K).
The dealer starts from the up card, draws the second card (hole card or, without a hole card,
the card drawn after the players: the same law by exchangeability) and then hits to 17, standing
on soft 17 (RULES 3). Outcome index: 0..4 = 17..21, 5 = bust, 6 = dealer blackjack.

Three implementations:

* ``dealer_probs_exact``: the reference, a recursion over the remaining shoe memoised on the
  composition, in ``Fraction`` (slow, used by tests and for exact side-bet figures).
* ``dealer_probs``: the fast one for one shoe. Every final dealer hand is a multiset ``m`` of
  drawn ranks reached by ``c(m)`` valid orders; its probability is
  ``c(m) * prod_r ff(n_r, m_r) / ff(N, |m|)`` (``ff`` = falling factorial). The sum is compiled
  once per up card into straight-line Python (factored rank by rank, Horner style) and evaluated
  in floats: much faster than the recursion, with the same figures up to floating-point rounding.
* ``dealer_probs_many``: the same sum for thousands of shoes at once (the main-game analysis),
  sharing its partial sums between shoes: the same figures, faster still per shoe.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from fractions import Fraction
from functools import cache
from operator import add, itemgetter, mul

OUTCOMES = ("17", "18", "19", "20", "21", "bust", "blackjack")
BUST, BJ = 5, 6
TEN = 9
ACE = 0


def full_shoe(decks: int = 8) -> tuple:
    """Counts of a full shoe of ``decks`` decks (RULES 1): 4*decks of A-9, 16*decks of tens."""
    return (4 * decks,) * 9 + (16 * decks,)


@cache
def hand_total(counts: tuple) -> tuple:
    """(score, soft) of a hand given as rank counts (a tuple; RULES 2: one ace counts 11 if it fits)."""
    hard = sum((i + 1) * c for i, c in enumerate(counts))
    if counts[0] and hard + 10 <= 21:
        return hard + 10, True
    return hard, False


def _dealer_stops(hard: int, has_ace: bool, hits_soft_17: bool):
    """Return None if the dealer draws again, else the final total (> 21 = bust)."""
    if has_ace and hard + 10 <= 21:
        soft = hard + 10
        if soft > 17 or (soft == 17 and not hits_soft_17):
            return soft
        return None
    if hard >= 17:
        return hard
    return None


@cache
def dealer_hands(up: int, hits_soft_17: bool = False) -> tuple:
    """Every final dealer hand from up card ``up`` (rank index) as ``(drawn, orders, outcome)``.

    ``drawn`` is a tuple of (rank, count) of the cards drawn after the up card (hole card
    included), ``orders`` the number of valid drawing orders, ``outcome`` an index of OUTCOMES.
    RULES 2 (blackjack = two cards, ace + ten) and 3 (dealer stands on 17, soft 17 too).
    """
    found: Counter = Counter()

    def rec(counts, hard, has_ace, n):
        if n == 2 and has_ace and hard == 11:
            found[(tuple(counts), BJ)] += 1
            return
        if n >= 2:
            final = _dealer_stops(hard, has_ace, hits_soft_17)
            if final is not None:
                found[(tuple(counts), BUST if final > 21 else final - 17)] += 1
                return
        for r in range(10):
            counts[r] += 1
            rec(counts, hard + r + 1, has_ace or r == ACE, n + 1)
            counts[r] -= 1

    rec([0] * 10, up + 1, up == ACE, 1)
    out = []
    for (counts, outcome), orders in found.items():
        drawn = tuple((r, c) for r, c in enumerate(counts) if c)
        out.append((drawn, orders, outcome))
    out.sort()
    return tuple(out)


# --------------------------------------------------------------------------------------------
# Reference implementation: recursion memoised on the composition, exact fractions.

def dealer_probs_exact(shoe: tuple, up: int, hits_soft_17: bool = False) -> tuple:
    """Exact dealer outcome probabilities (Fractions, OUTCOMES order) for up card ``up`` drawn
    from a shoe ``shoe`` that no longer contains it (RULES 2, 3). Reference implementation."""

    @cache
    def rec(shoe, hard, has_ace, n):
        if n == 2 and has_ace and hard == 11:
            res = [Fraction(0)] * 7
            res[BJ] = Fraction(1)
            return tuple(res)
        if n >= 2:
            final = _dealer_stops(hard, has_ace, hits_soft_17)
            if final is not None:
                res = [Fraction(0)] * 7
                res[BUST if final > 21 else final - 17] = Fraction(1)
                return tuple(res)
        total = sum(shoe)
        acc = [Fraction(0)] * 7
        for r in range(10):
            if shoe[r]:
                p = Fraction(shoe[r], total)
                nxt = shoe[:r] + (shoe[r] - 1,) + shoe[r + 1:]
                sub = rec(nxt, hard + r + 1, has_ace or r == ACE, n + 1)
                for i in range(7):
                    acc[i] += p * sub[i]
        return tuple(acc)

    return rec(tuple(shoe), up + 1, up == ACE, 1)


# --------------------------------------------------------------------------------------------
# Fast implementation: compiled polynomial in falling factorials.

def _factor(terms, lines, counter):
    """Emit Python statements computing sum(coef * prod f{r}_{j}) over ``terms``.

    ``terms`` is a list of (coef, ((r, j), ...)). Returns an expression (a temp name or a
    constant). Factoring takes out the most common rank first, so each product is shared.
    """
    consts = sum(c for c, fs in terms if not fs)
    rest = [(c, fs) for c, fs in terms if fs]
    if not rest:
        return repr(float(consts))
    freq = Counter(r for _, fs in rest for r, _ in fs)
    rank = max(freq, key=lambda r: (freq[r], -r))
    groups = defaultdict(list)
    without = []
    for c, fs in rest:
        hit = [j for r, j in fs if r == rank]
        if hit:
            groups[hit[0]].append((c, tuple((r, j) for r, j in fs if r != rank)))
        else:
            without.append((c, fs))
    parts = []
    for j in sorted(groups):
        sub = _factor(groups[j], lines, counter)
        parts.append(f"f{rank}_{j}" if sub == "1.0" else f"f{rank}_{j}*{sub}")
    if without:
        parts.append(_factor(without, lines, counter))
    if consts:
        parts.append(repr(float(consts)))
    counter[0] += 1
    name = f"t{counter[0]}"
    lines.append(f"    {name} = " + " + ".join(parts))
    return name


@cache
def _compiled(up: int, hits_soft_17: bool):
    """Compile the dealer polynomial of up card ``up`` into a Python function.

    The function takes ``(shoe, inv)`` where ``inv[k] = 1 / ff(N, k)`` and returns the seven
    outcome probabilities.
    """
    hands = dealer_hands(up, hits_soft_17)
    groups = defaultdict(list)
    maxj = [0] * 10
    for drawn, orders, outcome in hands:
        size = sum(c for _, c in drawn)
        groups[(outcome, size)].append((orders, drawn))
        for r, c in drawn:
            maxj[r] = max(maxj[r], c)
    lines = ["def f(shoe, inv):"]
    for r in range(10):
        if maxj[r]:
            lines.append(f"    n = shoe[{r}]")
            lines.append(f"    f{r}_1 = float(n)")
            for j in range(2, maxj[r] + 1):
                lines.append(f"    f{r}_{j} = f{r}_{j - 1} * (n - {j - 1})")
    counter = [0]
    sums = defaultdict(list)
    for (outcome, size), terms in sorted(groups.items()):
        expr = _factor(terms, lines, counter)
        sums[outcome].append(f"{expr}*inv[{size}]")
    outs = [(" + ".join(sums[o]) or "0.0") for o in range(7)]
    lines.append("    return (" + ", ".join(outs) + ",)")
    src = "\n".join(lines)
    namespace: dict = {}
    exec(compile(src, f"<dealer up={up} h17={hits_soft_17}>", "exec"), namespace)
    return namespace["f"], max(s for _, s in groups) if groups else 1


def _inverse_falling(total: int, kmax: int) -> list:
    inv = [1.0] * (kmax + 1)
    acc = 1.0
    for k in range(1, kmax + 1):
        acc *= total - k + 1
        inv[k] = 1.0 / acc if acc else 0.0
    return inv


def dealer_probs(shoe: tuple, up: int, hits_soft_17: bool = False) -> tuple:
    """Dealer outcome probabilities (floats, OUTCOMES order) for up card ``up`` from ``shoe``
    (the up card already removed). Same figures as ``dealer_probs_exact`` (RULES 2, 3)."""
    fn, kmax = _compiled(up, hits_soft_17)
    return fn(shoe, _inverse_falling(sum(shoe), kmax))


def dealer_probs_many(shoe: tuple, up: int, removals, hits_soft_17: bool = False) -> list:
    """``[dealer_probs(shoe - z, up) for z in removals]``: the dealer's outcome probabilities
    (floats, OUTCOMES order) for ``shoe`` (the up card already removed) less each rank-count
    tuple ``z`` of ``removals`` (the player's cards), all shoes computed together: the same
    figures up to floating-point rounding, much faster for the thousands of shoes of an analysis.

    Each outcome is the sum over the dealer's final hands ``m`` (``dealer_hands``) of
    ``c(m) * prod_r ff(shoe[r] - z[r], m[r]) / ff(N - |z|, |m|)``. Summed rank by rank, tens
    first, the part of that sum over ranks r..9 for the hands sharing their counts of ranks
    0..r-1 depends on ``z`` only through its tail ``z[r:]``, and the removals have far fewer
    distinct tails than there are removals: each partial sum is computed once per tail, as one
    list over the tails.
    """
    removals = list(removals)
    # Per rank r (tens first): the distinct tails z[r:], each tail's count of rank r, and where
    # its own tail z[r + 1:] sits in the list of the rank above.
    levels, above = [], {(): 0}
    for r in range(9, -1, -1):
        index: dict = {}
        for z in removals:
            index.setdefault(z[r:], len(index))
        levels.append((r, [t[0] for t in index], _gather([above[t[1:]] for t in index])))
        above = index
    # The sums, from the dealer's final hands (one value each, over the empty tail) down to one
    # list per (outcome, cards drawn) over the removals' distinct whole tails.
    sums = {}
    for drawn, orders, outcome in dealer_hands(up, hits_soft_17):
        counts = [0] * 10
        for r, c in drawn:
            counts[r] = c
        sums[(outcome, sum(counts), *counts)] = [float(orders)]
    for r, taken, gather in levels:
        factors: dict = {}
        grouped = defaultdict(list)
        for key, values in sums.items():
            grouped[key[:-1]].append((key[-1], values))
        sums = {}
        for key, children in grouped.items():
            total = None
            for j, values in children:
                part = gather(values)
                if j:
                    factor = factors.get(j)
                    if factor is None:
                        falling = {x: float(_falling(shoe[r] - x, j)) for x in set(taken)}
                        factor = factors[j] = [falling[x] for x in taken]
                    part = map(mul, factor, part)
                total = list(part) if total is None else list(map(add, total, part))
            sums[key] = total
    position = _gather([above[z] for z in removals])
    sizes = [sum(z) for z in removals]
    inverses = {n: _inverse_falling(sum(shoe) - n, 21) for n in set(sizes)}
    outcomes = [[0.0] * len(removals) for _ in OUTCOMES]
    for (outcome, drawn), values in sums.items():
        scale = [inverses[n][drawn] for n in sizes]
        outcomes[outcome] = list(map(add, outcomes[outcome], map(mul, position(values), scale)))
    return list(zip(*outcomes))


def _gather(positions: list):
    """A function taking a sequence to the tuple of its items at ``positions``."""
    if len(positions) == 1:
        (only,) = positions
        return lambda values: (values[only],)
    return itemgetter(*positions)


def dealer_blackjack(shoe: tuple, up: int) -> float:
    """Probability that the dealer's second card makes a blackjack (RULES 2)."""
    if up == ACE:
        return shoe[TEN] / sum(shoe)
    if up == TEN:
        return shoe[ACE] / sum(shoe)
    return 0.0


def _falling(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= n - i
    return out


@cache
def dealer_final_distribution(decks: int = 8, hits_soft_17: bool = False) -> tuple:
    """Exact law (Fractions) of the dealer's final hand from a full shoe, the dealer always
    completing: ``((outcome_index, cards_in_hand), probability)`` pairs (RULES 2, 3).

    The players' cards need not be removed: they are taken by decisions that depend only on the
    cards seen (stopping times), so the dealer's cards have the law of the first cards of a full
    shoe (optional stopping on an exchangeable sequence).
    """
    shoe0 = full_shoe(decks)
    total = sum(shoe0)
    dist: dict = defaultdict(Fraction)
    for up in range(10):
        p_up = Fraction(shoe0[up], total)
        shoe = shoe0[:up] + (shoe0[up] - 1,) + shoe0[up + 1:]
        n = total - 1
        for drawn, orders, outcome in dealer_hands(up, hits_soft_17):
            size = sum(c for _, c in drawn)
            num = orders
            for r, c in drawn:
                num *= _falling(shoe[r], c)
            dist[(outcome, size + 1)] += p_up * Fraction(num, _falling(n, size))
    return tuple(sorted(dist.items()))


def dealer_outcome_distribution(decks: int = 8, hits_soft_17: bool = False) -> dict:
    """Exact unconditioned law of the dealer's final hand from a full shoe (RULES 3):
    ``{"17": p, ..., "21": p, "bust": p, "blackjack": p}`` in Fractions."""
    out = {name: Fraction(0) for name in OUTCOMES}
    for (outcome, _), p in dealer_final_distribution(decks, hits_soft_17):
        out[OUTCOMES[outcome]] += p
    return out


def bust_card_count_distribution(decks: int = 8, hits_soft_17: bool = False) -> dict:
    """Exact probability (Fractions) that the dealer busts with k cards, k = 3..., up card and
    hole card included, the dealer always completing, from a full shoe (RULES 3, 8 bust_bonus);
    key ``"no_bust"`` for the rest. See ``dealer_final_distribution`` for why the players' cards
    are not removed."""
    dist: dict = defaultdict(Fraction)
    for (outcome, cards), p in dealer_final_distribution(decks, hits_soft_17):
        if outcome == BUST:
            dist[cards] += p
    out = {k: dist[k] for k in sorted(dist)}
    out["no_bust"] = 1 - sum(out.values())
    return out


def dealer_bust_probability(decks: int = 8, hits_soft_17: bool = False) -> Fraction:
    """Unconditioned probability that the dealer busts from a full shoe (RULES 3)."""
    return dealer_outcome_distribution(decks, hits_soft_17)["bust"]
