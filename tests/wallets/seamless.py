"""Seamless operators for the wallet journal's tests: an operator whose wallet is a reference
wallet process (``tests.operator_wallet.sandbox.Sandbox``), its players, and movements made by the
platform's own services and delivered against that wallet (``failing_credit``); and a wallet of
a test's own answering every call one fixed body (``Answering``, ``answering``)."""

import contextlib
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.utils import timezone

from accounts.models import Account, Operator
from accounts.operators import create_operator, upsert_player
from settlement.disputes import manual_adjustment
from tests.factories import CurrencyFactory, in_session
from tests.operator_wallet.sandbox import SECRET
from wagering.selectors import has_open_bets
from wallets import outbox
from wallets.models import WalletMovement


def seamless_operator(code, url, *, secret=SECRET, players=("p1",), currencies=("EUR",), name=""):
    """Seamless operator ``code`` whose wallet is at ``url`` (signed with ``secret``) and its
    ``players`` (codes) with a journal wallet and a live session (the game server bets only for
    players in session) in each of ``currencies``. Returns ``(operator, {code: Player})``."""
    for currency in currencies:
        CurrencyFactory(code=currency)
    operator, _ = create_operator(code=code, name=name or code, wallet_mode=Operator.WalletMode.SEAMLESS,
                                  currencies=currencies, wallet_url=url, wallet_secret=secret, wallet_timeout_ms=2000)
    found = {p: upsert_player(operator=operator, code=p, currencies=list(currencies),
                                 has_open_bets=has_open_bets)[0] for p in players}
    for player in found.values():
        for currency in currencies:
            in_session(player, currency)
    return operator, found


def journal_wallet(player, currency="EUR"):
    return Account.objects.select_related("operator", "player", "currency").get(
        kind=Account.Kind.WALLET, player=player, currency_id=currency)


def adjustment(player, amount, key, currency="EUR"):
    """A manual adjustment of ``player`` (``amount``: a signed decimal string) by the system: one
    outbox movement (an ``adjustment`` credit or a ``correction`` debit), not yet sent. Returns it."""
    manual_adjustment(player=player, currency=currency, amount=amount, reason=f"test {key}", actor="system", key=key)
    return WalletMovement.objects.get(ledger_key=f"adjust:manual:{key}")


def attempt(times=1, players=None):
    """Deliver the PENDING outbox movements of ``players`` (``Player``; None: all) ``times`` over,
    as if each were due (one attempt of each player's first per pass, against the wallets as they
    are)."""
    ids = None if players is None else [p.pk for p in players]
    for _ in range(times):
        outbox.deliver(ids, now=timezone.now() + timedelta(hours=1))


def failing_credit(player, key, attempts=7):
    """An adjustment credit of 5.00 to ``player`` tried ``attempts`` times against a wallet that
    does not take it (down, or a wrong secret): PENDING, failing, and after 7 attempts waiting 60 s
    for the next. Returns it."""
    movement = adjustment(player, "5.00", key)  # its delivery after commit may have tried it (in-process)
    attempt(attempts - movement.attempts, [player])
    movement.refresh_from_db()
    assert movement.state == WalletMovement.State.PENDING and movement.attempts == attempts, movement.last_error
    return movement


class Answering(BaseHTTPRequestHandler):
    """An operator's wallet answering every call 200 with ``body`` (bytes, sent as JSON)."""

    body = b""

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def answering(body, handler=Answering, **attributes):
    """A wallet server on a free local port, ``handler`` (an ``Answering`` class) answering
    ``body`` with ``attributes`` set on it, while the block runs: yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (handler,), {"body": body, **attributes}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
