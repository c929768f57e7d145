"""Runs every ``*.json`` case in tests/data/cases (found relative to this file; format in
tests/data/cases/README.md, records in docs/round-record.md). A case added to that folder is
tested without code changes; an empty or missing folder fails ``test_cases_folder_found``."""
import json
from decimal import Decimal
from pathlib import Path

import pytest

from tables.engine import InvalidRecord, settle

CASES_DIR = Path(__file__).resolve().parents[1] / "data" / "cases"
CASES = sorted(CASES_DIR.glob("*.json"))


def test_cases_folder_found():
    assert CASES, f"no case files found in {CASES_DIR}"


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case(path):
    case = json.loads(path.read_text())
    expected = case["expected"]
    if expected.get("invalid"):
        with pytest.raises(InvalidRecord) as e:
            settle(case["record"])
        msg = str(e.value)
        field = expected["error_field"]
        assert msg.startswith(field) or field in msg, msg
        return
    result = settle(case["record"])
    assert set(result.bets) == set(expected), "every bet of the round is settled"
    for bet_id, exp in expected.items():
        got = result.bets[bet_id]
        assert got.staked == Decimal(exp["staked"]), (bet_id, "staked", got.staked, got.explanation)
        assert got.returned == Decimal(exp["returned"]), (bet_id, "returned", got.returned, got.explanation)
    json.dumps(result.to_dict())  # the result is JSON-able
