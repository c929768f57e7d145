"""``--state FILE``: the journal replayed at start, so that a restarted wallet (stopped or killed)
keeps balances, movements with their first answers, tombstones and blocks."""

import json

import pytest

from tests.operator_wallet.sandbox import Sandbox


def books(wallet):
    state = wallet.state()
    return {key: state[key] for key in ("players", "transactions", "tombstones")}


def test_a_restarted_wallet_keeps_everything(start_wallet, tmp_path):
    path = tmp_path / "wallet.journal"
    sandbox, wallet = start_wallet(state=path)
    first = wallet.debit("i1:stake:1", amount="12.50")
    wallet.credit("i1:payout:1:p1", amount="0.00")
    wallet.debit("i1:stake:2", amount="5.00")
    wallet.rollback("i1:rollback:stake:2", "i1:stake:2")
    wallet.rollback("i1:rollback:stake:3", "i1:stake:3")  # a tombstone
    wallet.set_player(player="bob", blocked=True)
    wallet.set_player(player="ann", currency="USD", balance="7.00")
    before = books(wallet)
    sandbox.stop()

    sandbox, wallet = start_wallet("--initial-balance", "50.00", state=path)
    assert "8 records replayed" in sandbox.output()
    assert books(wallet) == before
    assert wallet.debit("i1:stake:1", amount="12.50") == first  # the first answer, balance then included
    assert wallet.debit("i1:stake:2", amount="5.00")["status"] == "ROLLED_BACK"
    assert wallet.debit("i1:stake:3", amount="5.00")["status"] == "ROLLED_BACK"
    assert wallet.debit("i1:stake:4", player="bob")["status"] == "PLAYER_BLOCKED"
    assert wallet.balance("p1")["balance"] == "987.50"  # opened before the restart: its balance, not 50.00
    assert wallet.balance("newcomer")["balance"] == "50.00"
    assert wallet.state()["counters"]["applied_twice"] == 0


def test_a_killed_wallet_keeps_every_answer_it_gave(start_wallet, tmp_path):
    path = tmp_path / "wallet.journal"
    sandbox, wallet = start_wallet(state=path)
    answers = [wallet.debit(f"i1:stake:{n}", amount="1.00") for n in range(50)]
    sandbox.kill()
    sandbox, wallet = start_wallet(state=path)
    assert [wallet.debit(f"i1:stake:{n}", amount="1.00") for n in range(50)] == answers
    assert wallet.balance()["balance"] == "950.00"


def test_a_torn_last_line_is_dropped(start_wallet, tmp_path):
    path = tmp_path / "wallet.journal"
    sandbox, wallet = start_wallet(state=path)
    wallet.debit("i1:stake:1", amount="1.00")
    sandbox.stop()
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"op":"move","transaction_id":"i1:st')  # a write the process did not finish
    sandbox, wallet = start_wallet(state=path)
    assert path.read_bytes() == whole
    wallet.debit("i1:stake:2", amount="1.00")
    assert wallet.balance()["balance"] == "998.00"
    assert all(json.loads(line) for line in path.read_bytes().splitlines())


def test_a_corrupt_journal_stops_the_start(tmp_path):
    path = tmp_path / "wallet.journal"
    path.write_text('{"op":"open","player":"p1","currency":"EUR","balance":"1.00"}\nnot json\n{}\n')
    with pytest.raises(RuntimeError, match="exited 2.*cannot start.*byte 62"):
        Sandbox(state=path, log_dir=tmp_path)


def test_reset_empties_the_state_file(start_wallet, tmp_path):
    path = tmp_path / "wallet.journal"
    sandbox, wallet = start_wallet(state=path)
    wallet.debit("i1:stake:1", amount="1.00")
    wallet.reset()
    assert path.read_bytes() == b""
    wallet.debit("i1:stake:2", amount="2.00")
    sandbox.stop()
    sandbox, wallet = start_wallet(state=path)
    assert list(wallet.state()["transactions"]) == ["i1:stake:2"]
