"""docs/round-record.md "A record is INVALID": one test per rejection reason. The error is the one
``InvalidRecord(path, reason)``; ``str()`` is ``"path: reason"``; nothing is settled."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tables.engine import InvalidRecord, ruleset, settle
from tests.engine.engine_helpers import boundless, main, seated


def base():
    return seated("premium", "9S 7H 5D", {1: ("8H 8D 3C TS KH", "split double stand"), 4: ("AS KD", "")},
                  [main(1), {"type": "behind", "seat": 1, "stake": "5.00", "follow_split": True},
                   {"type": "pairs", "seat": 1, "stake": "1.00"}, main(4, stake="20.00")])


def bl():
    return boundless("TC 7S", "8C 8H 3D TS 2C 9H",
                     [{"type": "main", "stake": "10.00", "actions": "split double hit stand"},
                      {"type": "pairs", "stake": "1.00"}])


def test_base_records_are_valid():
    settle(base())
    settle(bl())


def _set(rec, path, value):
    if isinstance(path, str):
        path = [path]
    obj = rec
    for k in path[:-1]:
        obj = obj[k]
    if value is _DEL:
        del obj[path[-1]]
    else:
        obj[path[-1]] = value


_DEL = object()

CASES = [
    # (id, make record, expected error prefix, reason fragment)
    ("malformed-card-seat", lambda r: _set(r, ["seats", "1", "cards", 0], "8X"), "seats.1.cards[0]", "malformed"),
    ("malformed-card-dealer", lambda r: _set(r, ["dealer", 1], "1H"), "dealer[1]", "malformed"),
    ("ten-as-int", lambda r: _set(r, ["dealer", 1], 10), "dealer[1]", "malformed"),
    ("card-9-times", lambda r: (_set(r, ["seats", "1", "cards"],
                                     ["8H", "8H", "8H", "8H", "8H", "8H", "8H", "8H", "8H"]),
                                _set(r, ["seats", "1", "actions"], [])), "seats.1.cards[8]", "more than 8"),
    ("double-on-3-cards", lambda r: _set(r, ["seats", "1", "actions"], ["hit", "double"]),
     "seats.1.actions[1]", "double not allowed on a hand of 3"),
    ("split-non-pair", lambda r: _set(r, ["seats", "1", "cards"], ["8H", "9D", "3C", "TS", "KH"]),
     "seats.1.actions[0]", "non-pair"),
    ("resplit", lambda r: (_set(r, ["seats", "1", "cards"], ["8H", "8D", "8C", "TS", "KH"]),
                           _set(r, ["seats", "1", "actions"], ["split", "split"])), "seats.1.actions[1]", "resplit"),
    ("surrender-after-hit", lambda r: (_set(r, ["seats", "1", "cards"], ["2H", "3D", "4C"]),
                                       _set(r, ["seats", "1", "actions"], ["hit", "surrender"])),
     "seats.1.actions[1]", "surrender"),
    ("surrender-vs-ace", lambda r: (_set(r, "dealer", ["AS", "7H"]), _set(r, ["seats", "1", "cards"], ["TH", "6D"]),
                                    _set(r, ["seats", "1", "actions"], ["surrender"])),
     "seats.1.actions[0]", "surrender not allowed against"),
    ("surrender-vs-ten", lambda r: (_set(r, "dealer", ["KS", "7H"]), _set(r, ["seats", "1", "cards"], ["TH", "6D"]),
                                    _set(r, ["seats", "1", "actions"], ["surrender"])),
     "seats.1.actions[0]", "surrender not allowed against"),
    ("surrender-split-hand", lambda r: _set(r, ["seats", "1", "actions"], ["split", "surrender"]),
     "seats.1.actions[1]", "surrender"),
    ("action-on-finished-hand", lambda r: _set(r, ["seats", "4", "actions"], ["stand"]),
     "seats.4.actions[0]", "not allowed"),
    ("action-after-all-hands", lambda r: _set(r, ["seats", "1", "actions"], ["split", "double", "stand", "stand"]),
     "seats.1.actions[3]", "no hand left"),
    ("double-split-aces", lambda r: (_set(r, ["seats", "1", "cards"], ["AH", "AD", "3C", "TS"]),
                                     _set(r, ["seats", "1", "actions"], ["split", "double"])),
     "seats.1.actions[1]", ""),
    ("unknown-action", lambda r: _set(r, ["seats", "1", "actions"], ["insurance"]),
     "seats.1.actions[0]", "unknown action"),
    ("cards-left-over", lambda r: _set(r, ["seats", "4", "cards"], ["AS", "KD", "2C"]), "seats.4.cards", "left over"),
    ("too-few-cards", lambda r: _set(r, ["seats", "1", "cards"], ["8H", "8D", "3C", "TS"]), "seats.1.cards", "too few"),
    ("one-card-seat", lambda r: _set(r, ["seats", "4", "cards"], ["AS"]), "seats.4.cards", "too few"),
    ("dealer-too-few", lambda r: _set(r, "dealer", ["9S", "7H"]), "dealer", "too few"),
    ("dealer-too-many", lambda r: _set(r, "dealer", ["9S", "7H", "5D", "2C"]), "dealer", "too many"),
    ("dealer-one-card", lambda r: _set(r, "dealer", ["9S"]), "dealer", "too few"),
    ("bet-on-empty-seat",
     lambda r: r["bets"].append({"id": "x", "player": "p", "type": "pairs", "seat": 2, "stake": "1.00"}),
     "bets[4].seat", "no cards"),
    ("type-not-offered", lambda r: _set(r, ["bets", 2, "type"], "pair"), "bets[2].type", "not offered"),
    ("insurance-no-ace", lambda r: _set(r, ["bets", 0, "insurance"], True), "bets[0].insurance", "not an ace"),
    ("stake-float", lambda r: _set(r, ["bets", 0, "stake"], 10.0), "bets[0].stake", "string"),
    ("stake-int", lambda r: _set(r, ["bets", 0, "stake"], 10), "bets[0].stake", "string"),
    ("stake-zero", lambda r: _set(r, ["bets", 0, "stake"], "0.00"), "bets[0].stake", "positive"),
    ("stake-negative", lambda r: _set(r, ["bets", 0, "stake"], "-5.00"), "bets[0].stake", ""),
    ("stake-sub-minor", lambda r: _set(r, ["bets", 0, "stake"], "10.005"), "bets[0].stake", "minor units"),
    ("stake-exponent", lambda r: _set(r, ["bets", 0, "stake"], "1e3"), "bets[0].stake", ""),
    ("stake-missing", lambda r: _set(r, ["bets", 0, "stake"], _DEL), "bets[0].stake", ""),
    ("duplicate-id", lambda r: _set(r, ["bets", 1, "id"], "b1"), "bets[1].id", "duplicate"),
    ("unknown-variant", lambda r: _set(r, "variant", "spanish21"), "variant", "unknown"),
    ("unknown-format", lambda r: _set(r, "format", "round-record/2"), "format", "unknown"),
    ("bad-shoe-round", lambda r: _set(r, "shoe_round", 0), "shoe_round", ""),
    ("seat-without-main", lambda r: _set(r, "bets", [b for b in r["bets"] if b.get("seat") != 4]),
     "seats.4", "without a main bet"),
    ("two-mains-one-seat", lambda r: r["bets"].append(main(4, id="x", player="z")),
     "bets[4].seat", "already has a main"),
    ("bad-seat-number", lambda r: r["seats"].update({"8": {"cards": ["2C", "3C"], "actions": []}}),
     "seats.8", "seat number"),
    ("premium-unequal-two-seats", lambda r: _set(r, ["bets", 3, "player"], r["bets"][0]["player"]),
     "bets[3].stake", "equal"),
    ("premium-behind-own-seat", lambda r: _set(r, ["bets", 1, "player"], r["bets"][0]["player"]),
     "bets[1].seat", "own seat"),
    ("player-cards-in-premium", lambda r: _set(r, "player_cards", ["2C", "3C"]), "player_cards", "not used"),
    ("follow-flag-on-main", lambda r: _set(r, ["bets", 0, "follow_split"], True), "bets[0].follow_split", ""),
    ("actions-on-seated-bet", lambda r: _set(r, ["bets", 0, "actions"], []), "bets[0].actions", ""),
    ("bool-not-bool", lambda r: _set(r, ["bets", 1, "follow_split"], "yes"), "bets[1].follow_split", ""),
    ("record-not-object", lambda r: r.clear() or r.update({"format": None}), "format", ""),
    ("unknown-top-level-field", lambda r: _set(r, "table", "T-1"), "table", "unknown field"),
    ("unknown-seat-field", lambda r: _set(r, ["seats", "4", "action"], ["stand"]), "seats.4.action", "unknown field"),
    ("misspelt-follow-flag", lambda r: _set(r, ["bets", 1, "follow_dobule"], True), "bets[1].follow_dobule",
     "unknown field"),
]

BL_CASES = [
    ("boundless-main-without-actions", lambda r: _set(r, ["bets", 0, "actions"], _DEL),
     "bets[0].actions", "actions list"),
    ("boundless-behind", lambda r: r["bets"].append({"id": "x", "player": "q", "type": "behind", "stake": "1.00"}),
     "bets[2].type", "not offered"),
    ("boundless-seat", lambda r: _set(r, ["bets", 1, "seat"], 1), "bets[1].seat", ""),
    ("boundless-seats-key", lambda r: _set(r, "seats", {}), "seats", ""),
    ("boundless-left-over", lambda r: r["player_cards"].append("2D"), "player_cards", "left over"),
    ("boundless-too-few", lambda r: r["player_cards"].pop(), "player_cards", "too few"),
    ("boundless-illegal-action", lambda r: _set(r, ["bets", 0, "actions"], ["hit", "split"]),
     "bets[0].actions[1]", "split"),
    ("boundless-past-last-round", lambda r: _set(r, "shoe_round", 41), "bets[1].type", "shoe round 40"),
    ("boundless-action-not-str", lambda r: _set(r, ["bets", 0, "actions"], [["hit"]]), "bets[0].actions", ""),
    ("boundless-insurance-no-ace", lambda r: _set(r, ["bets", 0, "insurance"], True),
     "bets[0].insurance", "not an ace"),
    ("boundless-dealer-too-few", lambda r: _set(r, "dealer", ["TC", "5S"]), "dealer", "too few"),
    # a main bet of five or six keys takes the many-players path: an unknown one among them too
    ("boundless-main-unknown-field", lambda r: (_set(r, ["bets", 0, "actions"], _DEL), _set(r, ["bets", 0, "action"],
                                                                                            ["stand"])),
     "bets[0].action", "unknown field"),
    ("boundless-main-insured-unknown-field", lambda r: (_set(r, ["bets", 0, "insurance"], False),
                                                        _set(r, ["bets", 0, "actions"], _DEL),
                                                        _set(r, ["bets", 0, "note"], "x")), "bets[0].note",
     "unknown field"),
]


@pytest.mark.parametrize("make,prefix,fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_invalid_seated(make, prefix, fragment):
    rec = base()
    make(rec)
    with pytest.raises(InvalidRecord) as e:
        settle(rec)
    assert str(e.value).startswith(prefix + ":"), str(e.value)
    assert fragment in e.value.reason
    assert str(e.value) == f"{e.value.path}: {e.value.reason}"


@pytest.mark.parametrize("make,prefix,fragment", [c[1:] for c in BL_CASES], ids=[c[0] for c in BL_CASES])
def test_invalid_boundless(make, prefix, fragment):
    rec = bl()
    make(rec)
    with pytest.raises(InvalidRecord) as e:
        settle(rec)
    assert str(e.value).startswith(prefix), str(e.value)
    assert fragment in e.value.reason


def test_invalid_classic_second_seat_for_player():
    rec = seated("classic", "9S 8D", {1: ("TS 9H", "stand"), 2: ("TS 8H", "stand")},
                 [main(1, player="p"), main(2, player="p")])
    with pytest.raises(InvalidRecord, match=r"^bets\[1\]\.seat: player p already holds 1 seat"):
        settle(rec)


def test_invalid_premium_third_seat_for_player():
    rec = seated("premium", "9S 8D", {1: ("TS 9H", "stand"), 2: ("TS 8H", "stand"), 3: ("TS 7H", "stand")},
                 [main(1, player="p"), main(2, player="p"), main(3, player="p")])
    with pytest.raises(InvalidRecord, match=r"^bets\[2\]\.seat"):
        settle(rec)


def test_invalid_rules_of_other_variant():
    with pytest.raises(InvalidRecord, match="^variant"):
        settle(base(), rules=ruleset("classic"))


def test_invalid_not_an_object():
    with pytest.raises(InvalidRecord, match="^record"):
        settle([])


ROOT = Path(__file__).resolve().parents[2]


def _cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "tables.engine", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True)


def test_cli_settle_invalid_exits_2_with_error_on_stderr():
    rec = base()
    rec["seats"]["1"]["actions"] = ["hit", "double"]
    p = _cli("settle", "-", stdin=json.dumps(rec))
    assert p.returncode == 2
    assert p.stderr.startswith("seats.1.actions[1]: ")
    assert p.stdout == ""


def test_cli_settle_and_deal():
    p = _cli("deal", "--variant", "premium", "--seed", "4")
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    q = _cli("settle", "-", stdin=json.dumps({"name": "x", "record": rec}))
    assert q.returncode == 0, q.stderr
    out = json.loads(q.stdout)
    assert set(out["bets"]) == {b["id"] for b in rec["bets"]}
    assert "dealer" in out and "seats" in out
