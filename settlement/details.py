"""The detail settlement stores for each bet (``SettlementDetail.detail``): the engine's
``BetResult.to_dict()`` (docs/round-record.md "Result": hands, decisions, odds, insurance, side-bet
pattern, explanation) without the record's ids (``settlement.selectors.PRIVATE_DETAIL``: ``id``,
``player``, ``path``), which the bet row holds and no reader shows.

Without its ids, a detail is the same for every bet settled alike, so it is built and stored once
per kind of bet, not once per bet (the many bets of a boundless round fall into few kinds):

- a boundless main bet's detail is fixed by its path (the actions taken; the engine replays each
  path once), its stake and whether it took insurance;
- a side bet's by its type, seat, stake, and the pattern and odds paid.

A seat's main bet or bet behind (classic, premium) is built on its own: its hands are its seat's.
"""

from settlement.selectors import PRIVATE_DETAIL


def _kind(result):
    """What fixes ``result``'s (a ``BetResult``) detail, or None when it is built on its own."""
    if result.type in ("main", "behind"):
        if result.path is None:
            return None
        return result.type, result.path, result.stake, result.insurance is None
    return result.type, result.seat, result.stake, result.pattern, result.odds


def stored_detail(result):
    """The detail stored for ``result`` (a ``BetResult``): its ``to_dict()`` without the ids."""
    detail = result.to_dict()
    for key in PRIVATE_DETAIL:
        detail.pop(key, None)
    return detail


def distinct_details(results):
    """The details of ``results`` (an iterable of ``BetResult``), each built once: ``(details,
    index)``, where ``details`` are the distinct details (dicts, ``stored_detail``) and
    ``index[i]`` is the position in ``details`` of the ``i``-th result's."""
    details, positions, index = [], {}, []
    for result in results:
        kind = _kind(result)
        position = positions.get(kind) if kind is not None else None
        if position is None:
            position = len(details)
            details.append(stored_detail(result))
            if kind is not None:
                positions[kind] = position
        index.append(position)
    return details, index
