"""What a settlement sends PostgreSQL for a round of many bets settled alike: per bet only what
differs from bet to bet (``settlement.services._write_results``, ``accounts.sql.array_sql``)."""

from decimal import Decimal

import pytest

from settlement import services
from settlement.services import settle_round
from wagering.models import Bet

from .helpers import BETS, played_round

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

#: Six bets of two kinds (three hits that win, three stands that lose).
ALIKE = {f"{kind}-{n}": BETS[kind] for kind in ("hit", "stand") for n in range(3)}


def _elements(param):
    """How many elements ``param`` (a list, or a ``number_array`` literal) holds; None for a scalar."""
    if isinstance(param, list):
        return len(param)
    if isinstance(param, str) and param.startswith("{"):
        return len(param[1:-1].split(",")) if param != "{}" else 0
    return None


def test_the_bets_update_carries_per_bet_only_its_id_and_its_kind(monkeypatch):
    round_, _ = played_round(bets=ALIKE)
    sent, real = [], services.execute_binary

    def spy(sql, params, **options):
        if f"UPDATE {Bet._meta.db_table}" in sql:
            sent.append(params)
        return real(sql, params, **options)

    monkeypatch.setattr(services, "execute_binary", spy)
    settle_round(round_id=round_.pk)
    (params,) = sent
    assert sorted(_elements(p) for p in params if _elements(p) is not None) == [2, 2, 2, 2, 6, 6]  # 2: the open states
    settled = {rid: (state, outcome, returned) for rid, state, outcome, returned in
               Bet.objects.filter(round=round_).values_list("record_id", "state", "outcome", "returned")}
    assert settled == {rid: ("settled", "win" if rid.startswith("hit") else "lose",
                             Decimal("20.00") if rid.startswith("hit") else Decimal("0.00")) for rid in ALIKE}
    details = set(Bet.objects.filter(round=round_).values_list("settlement_id", flat=True))
    assert len(details) == 2  # one detail per kind, each bet pointing at its kind's
