"""A seamless player's balance asked of the operator's wallet (``wallets.balances``, the protocol's
``balance`` call): the reference wallet's answer as a ``Decimal``; when the wallet is down, refuses
the signature, is not there, stays silent or answers no money, the reason, never an exception; a
silent wallet costs one short timeout for all the player's wallets."""

import json
import socket
import threading
import time
from decimal import Decimal
from http.server import ThreadingHTTPServer

import pytest
from django.core.cache import cache

from tests.operator_wallet.sandbox import SECRET, free_port
from tests.wagering.conftest import client_for
from tests.wallets.seamless import Answering, journal_wallet, seamless_operator
from wallets import client
from wallets.balances import BEING_ASKED, ask_balance, ask_balances

pytestmark = pytest.mark.django_db


def test_the_operators_wallet_answers_the_balance(wallet):
    player = seamless_operator("sea", wallet.url, name="Sea Casino")[1]["p1"]
    wallet.set_player(player="p1", currency="EUR", balance="123.45")
    asked = ask_balance(journal_wallet(player))
    assert (asked.amount, asked.unknown, asked.operator.name, asked.currency.code) == (
        Decimal("123.45"), "", "Sea Casino", "EUR")
    assert wallet.state()["counters"]["calls"]["balance"] == 1


@pytest.mark.parametrize("fault, reason", [("down", "HTTP 503"), ("wrong secret", "HTTP 401")])
def test_a_wallet_that_does_not_answer_says_why(wallet, fault, reason):
    player = seamless_operator("sea", wallet.url, secret="wrong" if fault == "wrong secret" else SECRET)[1]["p1"]
    if fault == "down":
        wallet.faults(down=True)
    asked = ask_balance(journal_wallet(player))
    assert asked.amount is None and asked.unknown == f"the operator's wallet did not answer: {reason}"


def test_a_wallet_that_is_not_there_says_so(db):
    player = seamless_operator("sea", f"http://127.0.0.1:{free_port()}")[1]["p1"]
    asked = ask_balance(journal_wallet(player))
    assert asked.amount is None and asked.unknown.startswith("the operator's wallet did not answer: ")


@pytest.fixture
def serve():
    """``serve(answer) -> url``: a wallet of the test's own answering every call ``answer`` (JSON)."""
    servers = []

    def start(answer):
        handler = type("Handler", (Answering,), {"body": json.dumps(answer).encode()})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}"
    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("balance", ["12.345", "NaN", None, "lots"])
def test_an_answer_without_a_balance_in_the_currency_is_no_balance(db, serve, balance):
    player = seamless_operator("odd", serve({"status": "OK", "balance": balance}))[1]["p1"]
    asked = ask_balance(journal_wallet(player))
    assert asked.amount is None and asked.unknown == f"the operator's wallet answered no EUR balance: {balance!r}"


def test_a_silent_wallet_costs_one_short_timeout_for_all_the_players_wallets(db, settings):
    settings.WALLET_BALANCE_TIMEOUT_MS = 300
    with socket.socket() as silent:  # accepts connections (the kernel's backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        player = seamless_operator("mute", f"http://127.0.0.1:{silent.getsockname()[1]}",
                                   currencies=("EUR", "USD"))[1]["p1"]
        wallets = [journal_wallet(player, "EUR"), journal_wallet(player, "USD")]
        started = time.monotonic()
        asked = ask_balances(wallets)
        elapsed = time.monotonic() - started
    assert 0.3 <= elapsed < 1.5, elapsed
    assert [asked[w.pk].amount for w in wallets] == [None, None]
    assert all(asked[w.pk].unknown.startswith("the operator's wallet did not answer: ") for w in wallets)


@pytest.mark.parametrize("balance", ["1e999999", "1" * 41, "-1E+30"])
def test_an_answer_with_a_balance_out_of_range_is_no_balance(db, serve, balance):
    player = seamless_operator("odd", serve({"status": "OK", "balance": balance}))[1]["p1"]
    asked = ask_balance(journal_wallet(player))
    assert asked.amount is None and asked.unknown == f"the operator's wallet answered no EUR balance: {balance!r}"


@pytest.mark.parametrize("body", [b'{"status":"OK","balance":1e999999}', b'{"status":"OK","balance":NaN}',
                                  b'{"status":"OK","balance":' + b"9" * 41 + b"}"])
def test_a_balance_answered_as_an_out_of_range_number_is_no_balance_and_kept_as_json(db, body):
    handler = type("Handler", (Answering,), {"body": body})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        player = seamless_operator("odd", f"http://127.0.0.1:{server.server_port}")[1]["p1"]
        answer = client.send_many(player.operator, [("balance", {"player": "p1", "currency": "EUR"})])[0]
        asked = ask_balance(journal_wallet(player))
    finally:
        server.shutdown()
        server.server_close()
    json.dumps(answer.body, allow_nan=False)  # a journal's JSON column takes it
    assert asked.amount is None and asked.unknown.startswith("the operator's wallet answered no EUR balance: ")


def test_the_player_api_and_the_admin_show_an_out_of_range_balance_as_unknown(db, serve, admin_client):
    player = seamless_operator("odd", serve({"status": "OK", "balance": "1e999999"}))[1]["p1"]
    wallet = journal_wallet(player)
    me = client_for(player.user).get("/api/v1/me")
    assert me.status_code == 200 and me.json()["wallets"][0]["balance"] is None
    for page in (f"/admin/accounts/player/{player.pk}/change/", f"/admin/accounts/account/{wallet.pk}/change/",
                 f"/admin/accounts/account/{wallet.pk}/adjust/"):
        assert admin_client.get(page).status_code == 200, page


def test_a_wallets_balance_is_asked_once_per_interval(wallet, settings):
    player = seamless_operator("sea", wallet.url)[1]["p1"]
    wallet.set_player(player="p1", currency="EUR", balance="123.45")
    first, again = ask_balance(journal_wallet(player)), ask_balance(journal_wallet(player))
    assert first.amount == again.amount == Decimal("123.45") and again.asked_at == first.asked_at
    assert wallet.state()["counters"]["calls"]["balance"] == 1
    settings.WALLET_BALANCE_CACHE_SECONDS = 0  # nothing kept: asked each time
    cache.clear()
    ask_balance(journal_wallet(player))
    ask_balance(journal_wallet(player))
    assert wallet.state()["counters"]["calls"]["balance"] == 3


class _Slow(Answering):
    """Answers every call after ``release`` is set, counting the calls."""

    release, calls = None, []

    def do_POST(self):
        self.calls.append(self.path)
        self.release.wait(10)
        super().do_POST()


def test_a_request_asking_while_another_asks_is_answered_at_once_without_a_call(db):
    handler = type("Handler", (_Slow,), {"body": b'{"status":"OK","balance":"7.00"}', "release": threading.Event(),
                                         "calls": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        player = seamless_operator("slow", f"http://127.0.0.1:{server.server_port}")[1]["p1"]
        first, journal = {}, journal_wallet(player)  # read here: the thread asks the wallet, not the database
        asking = threading.Thread(target=lambda: first.update(asked=ask_balance(journal)))
        asking.start()
        for _ in range(1000):  # until the first request's call has reached the wallet
            if handler.calls:
                break
            time.sleep(0.01)
        second = ask_balance(journal)
        handler.release.set()
        asking.join()
    finally:
        server.shutdown()
        server.server_close()
    assert (second.amount, second.unknown) == (None, BEING_ASKED)
    assert first["asked"].amount == Decimal("7.00") and handler.calls == ["/balance"]
    assert ask_balance(journal_wallet(player)).amount == Decimal("7.00")  # kept: no second call
    assert handler.calls == ["/balance"]
