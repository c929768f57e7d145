"""Codes the provider's staff give to what every tenant sees by name: operators (an operator's
code is in its players' game codes), studios and tables (in round records, reports, the game
server's calls). They are unique whatever their case, so ``east`` and ``EAST`` are never two
operators, nor ``CL-1`` and ``cl-1`` two tables; the staff's commands find one whatever the case
typed, and the APIs take a code exactly as the platform gave it (a table's code in the
game-server API's paths, a player's game code): an exact code can only ever match one row.
Players' codes are not such codes: they are each operator's own identifiers, unique within it
only, and kept case-sensitive as the operator sends them (an operator's system may tell ``Ann``
from ``ann``; no other operator's player can be reached by either)."""

from collections import defaultdict


def refuse_clashes(model, what):
    """Raise ``ValueError`` naming the ``code`` values of ``model`` (a model class, a historical
    one in a migration) that differ only by case; ``what`` names them (``operator``, ``table``)."""
    groups = defaultdict(list)
    for code in model.objects.values_list("code", flat=True):
        groups[code.lower()].append(code)
    clashes = sorted(sorted(group) for group in groups.values() if len(group) > 1)
    if clashes:
        shown = "; ".join(", ".join(repr(code) for code in group) for group in clashes)
        raise ValueError(f"{what} codes must be unique whatever their case, and these clash: {shown}. "
                         f"Rename all but one of each (e.g. in the admin) and migrate again.")
