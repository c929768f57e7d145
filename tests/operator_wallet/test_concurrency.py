"""Concurrent calls for one player or one transaction id (docs/wallet-api.md): 200 at once, on
200 connections, the faults' jitter shuffling the order they are processed in."""

import asyncio
from decimal import Decimal

import httpx

from tests.operator_wallet.sandbox import debit_fields, signed

CONCURRENCY = 200


def send_all(url, calls):
    """Send ``calls`` ([(name, fields)]) all at once; their answers' JSON, in order."""

    async def main():
        limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30) as client:
            async def one(name, fields):
                path, content, headers = signed(name, fields)
                response = await client.post(path, content=content, headers=headers)
                assert response.status_code == 200, response.text
                return response.json()

            return await asyncio.gather(*(one(name, fields) for name, fields in calls))

    return asyncio.run(main())


def test_concurrent_debits_of_one_player_never_overdraw(wallet):
    wallet.faults(jitter_ms=50)
    answers = send_all(wallet.url, [("debit", debit_fields(f"i1:stake:{n}", amount="7.00"))
                                    for n in range(CONCURRENCY)])
    accepted = [a for a in answers if a["status"] == "OK"]
    assert len(accepted) == 142  # 1000.00 // 7.00
    assert {a["status"] for a in answers} == {"OK", "INSUFFICIENT_FUNDS"}
    assert sorted(Decimal(a["balance"]) for a in accepted) == [Decimal(6 + 7 * n) for n in range(142)]
    state = wallet.state()
    assert state["players"]["p1"]["balances"]["EUR"] == "6.00" and len(state["transactions"]) == 142


def test_concurrent_identical_calls_apply_once(wallet):
    wallet.faults(jitter_ms=50)
    for name, kind in (("debit", "stake"), ("credit", "payout")):
        fields = debit_fields(f"i1:{kind}:1", amount="10.00", kind=kind)
        answers = send_all(wallet.url, [(name, fields)] * CONCURRENCY)
        assert len({tuple(sorted(a.items())) for a in answers}) == 1
    state = wallet.state()
    assert state["players"]["p1"]["balances"]["EUR"] == "1000.00" and len(state["transactions"]) == 2
    assert state["counters"]["replays"] == 2 * (CONCURRENCY - 1) and state["counters"]["applied_twice"] == 0


def test_a_debit_and_its_rollback_racing_end_in_one_of_the_two_orders(wallet):
    """Whichever arrives first, the player ends where they began and the debit is undone."""
    wallet.faults(jitter_ms=30)
    calls = []
    for n in range(CONCURRENCY // 2):
        calls.append(("debit", debit_fields(f"i1:stake:{n}", amount="5.00")))
        calls.append(("rollback", {"transaction_id": f"i1:rollback:stake:{n}",
                                   "reference_transaction_id": f"i1:stake:{n}", "player": "p1",
                                   "currency": "EUR", "round": 1}))
    answers = send_all(wallet.url, calls)
    for debit, rollback in zip(answers[::2], answers[1::2]):
        assert (debit["status"], rollback["status"]) in {("OK", "OK"), ("ROLLED_BACK", "UNKNOWN_TRANSACTION")}
    assert wallet.balance()["balance"] == "1000.00"
