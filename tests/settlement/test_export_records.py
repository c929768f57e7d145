"""``manage.py export_records``: a date range of round records, bets and ledger movements as JSON
Lines with a manifest whose counts and hashes match the files; an operator's export holds its
players' records only; a round's document holds what recreates it."""

import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts.models import LedgerEntry
from settlement.regulator import file_sha256
from tests.admin.conftest import two_operators

pytestmark = pytest.mark.django_db


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _export(tmp_path, *extra):
    today = timezone.now().date()
    call_command("export_records", "--from", (today - timedelta(days=1)).isoformat(), "--to", today.isoformat(),
                 "--out", str(tmp_path), *extra)
    return json.loads((tmp_path / "manifest.json").read_text())


def test_export_writes_every_record_of_the_range_with_a_manifest(tmp_path):
    ab = two_operators()
    manifest = _export(tmp_path)
    for name, counted in manifest["files"].items():
        assert counted["sha256"] == file_sha256(tmp_path / name)
        assert counted["lines"] == len(_lines(tmp_path / name))
    rounds = {r["round"]: r for r in _lines(tmp_path / "rounds.jsonl")}
    assert set(rounds) == {ab.shared.pk, ab.b_round.pk}
    assert manifest["files"]["bets.jsonl"]["lines"] == 6
    assert manifest["files"]["ledger.jsonl"]["lines"] == LedgerEntry.objects.count()

    shared = rounds[ab.shared.pk]
    assert shared["rules_version"] == ab.shared.rules_version and shared["game"] == "boundless"
    assert shared["pay_tables"] and shared["times"]["opened_at"] and shared["times"]["settled_at"]
    assert shared["record_settled"]["dealer"] == ["TC", "7S"]
    assert shared["record_settled"]["player_cards"] == ["8C", "8H", "3D"]
    assert any(s["kind"] == "bet_placed" and s["by"] == "test" for s in shared["steps"])
    assert [s["kind"] for s in shared["steps"]][-1] == "settled"
    stake = next(m for m in shared["ledger"] if m["key"] == ab.shared_bets[0].stake_key())
    assert (stake["amount"], stake["balance_before"], stake["balance_after"]) == ("-10.00", "100.00", "90.00")
    corrected = rounds[ab.b_round.pk]
    assert corrected["corrections"][0]["reason"] == "beta correction"
    assert corrected["record_settled"]["player_cards"] == ["8C", "8H", "3H"]


def test_an_operators_export_holds_its_records_only(tmp_path):
    ab = two_operators()
    manifest = _export(tmp_path, "--operator", "brand-alpha")
    assert manifest["operator"] == "brand-alpha"
    rounds = _lines(tmp_path / "rounds.jsonl")
    assert [r["round"] for r in rounds] == [ab.shared.pk]
    assert all(m["operator"] == "brand-alpha" for m in rounds[0]["ledger"])
    bets = _lines(tmp_path / "bets.jsonl")
    assert sorted(b["bet"] for b in bets) == [ab.shared_bets[0].pk, ab.shared_bets[2].pk]
    assert {b["operator"] for b in bets} == {"brand-alpha"}
    assert {m["operator"] for m in _lines(tmp_path / "ledger.jsonl")} == {"brand-alpha"}
    text = "".join((tmp_path / name).read_text() for name in manifest["files"])
    assert "brand-beta" not in text and "beta-p" not in text and "beta correction" not in text


def test_export_takes_the_first_and_last_days_of_the_calendar(tmp_path, db):
    call_command("export_records", "--from", "0001-01-01", "--to", "9999-12-31", "--out", str(tmp_path))
    assert json.loads((tmp_path / "manifest.json").read_text())["files"]


def test_export_refuses_a_bad_range_or_operator(tmp_path, db):
    with pytest.raises(CommandError, match="not a date"):
        call_command("export_records", "--from", "yesterday", "--to", "2026-01-01", "--out", str(tmp_path))
    with pytest.raises(CommandError, match="before"):
        call_command("export_records", "--from", "2026-01-02", "--to", "2026-01-01", "--out", str(tmp_path))
    with pytest.raises(CommandError, match="no operator"):
        call_command("export_records", "--from", "2026-01-01", "--to", "2026-01-01", "--operator", "nobody",
                     "--out", str(tmp_path))
