"""The wallet's HTTP endpoints (aiohttp.web, HTTP/1.1 with keep-alive), docs/wallet-api.md.

The protocol: ``POST /balance``, ``/debit``, ``/credit``, ``/rollback``, signed. Every protocol
answer is HTTP 200 with the wallet's JSON answer; a bad ``X-Signature`` is HTTP 401, a body that
is not a valid call (``operator_wallet.protocol.parse``, or a rollback naming the wrong movement)
HTTP 400, both ``{"error": "..."}``. The faults of ``operator_wallet.faults`` apply to the money
calls, ``down`` to the four.

The sandbox's administration, unsigned, on the same port (for sandboxes and tests only):
``GET /_admin/state``, ``POST /_admin/players``, ``POST /_admin/faults``, ``POST /_admin/reset``."""

import asyncio
import json

from aiohttp import web

from operator_wallet.protocol import CALLS, SIGNATURE_HEADER, BadCall, loads, parse, signed

JSON = "application/json"


class WalletServer:
    """The endpoints of one wallet: ``wallet`` (``operator_wallet.wallet.Wallet``), ``injector``
    (``operator_wallet.faults.Injector``), ``journal`` (the wallet's
    ``operator_wallet.journal.Journal``), ``secret`` (bytes: the operator's wallet secret).
    ``app()`` is the ``aiohttp.web.Application`` serving them."""

    def __init__(self, wallet, injector, journal, secret):
        self.wallet = wallet
        self.injector = injector
        self.journal = journal
        self.secret = secret
        self._reset_counters()

    def app(self):
        app = web.Application()
        for name in CALLS:
            app.router.add_post(f"/{name}", self._endpoint(name))
        app.router.add_get("/_admin/state", self.state)
        app.router.add_post("/_admin/players", self.players)
        app.router.add_post("/_admin/faults", self.faults)
        app.router.add_post("/_admin/reset", self.reset)
        app.on_startup.append(self._start)
        app.on_cleanup.append(self._close)
        return app

    # -- the protocol -------------------------------------------------------------------------

    def _endpoint(self, name):
        async def endpoint(request):
            return await self.call(name, request)

        return endpoint

    async def call(self, name, request):
        """Answer the call ``name`` (one of ``CALLS``) that ``request`` makes."""
        self.counters["calls"][name] += 1
        if self.injector.down():
            return _error(503, "the wallet is down")
        body = await request.read()
        if not signed(self.secret, request.headers.get(SIGNATURE_HEADER), body):
            self.counters["bad_signatures"] += 1
            return _error(401, f"{SIGNATURE_HEADER} does not sign the body")
        try:
            if request.content_type != JSON:
                raise BadCall(f"Content-Type must be {JSON}")
            call = parse(name, body, self.wallet.currencies)
            if name == "balance":
                answer = self.wallet.balance(call)
            else:
                return await self._money(request, call)
        except BadCall as error:
            self.counters["invalid"] += 1
            return _error(400, str(error))
        await self.journal.written()
        return _answer(answer)

    async def _money(self, request, call):
        """A debit, credit or rollback, through the faults in the order docs/wallet-api.md gives."""
        injector = self.injector
        await injector.latency()
        if injector.hit("error_before"):
            return _error(503, "fault injected: error before applying")
        dropped = injector.hit("drop")
        if dropped and not injector.faults.drop_applies:
            _drop(request)
        if call.name == "debit" and injector.hit("late_debit"):
            await asyncio.sleep(injector.faults.late_debit_ms / 1000)
        answer = getattr(self.wallet, call.name)(call)
        await self.journal.written()
        if dropped:
            _drop(request)
        if injector.hit("timeout"):
            await asyncio.sleep(injector.faults.timeout_ms / 1000)
        elif injector.hit("error_after"):
            return _error(500, "fault injected: error after applying")
        return _answer(answer)

    # -- the sandbox's administration -----------------------------------------------------------

    async def state(self, request):
        """The books (``Wallet.snapshot``), the faults in force, and the counters: calls received
        per endpoint, bad signatures, invalid calls, the wallet's, and faults injected per kind."""
        books = self.wallet.snapshot()
        counters = {**self.counters, **books.pop("counters"), "faults": dict(self.injector.injected)}
        return _answer({**books, "counters": counters, "faults": self.injector.faults.as_json()})

    async def players(self, request):
        """``{"player": code, "blocked": bool, "currency": code, "balance": "12.50"}`` (blocked,
        or currency and balance, or both) -> the player (``Wallet.set_player``)."""
        try:
            changes = await _json_object(request)
            unknown = set(changes) - {"player", "blocked", "currency", "balance"}
            if unknown:
                raise ValueError(f"unknown fields {sorted(unknown)}")
            player = self.wallet.set_player(**changes)
        except (ValueError, TypeError) as error:
            return _error(400, str(error))
        await self.journal.written()
        return _answer(player)

    async def faults(self, request):
        """A JSON object of fault names and values (``Faults.updated``) -> the faults now in force."""
        try:
            return _answer(self.injector.configure(await _json_object(request)).as_json())
        except ValueError as error:
            return _error(400, str(error))

    async def reset(self, request):
        """Forget the books (and empty the state file), zero the counters, and restore the faults
        of the command line -> the state."""
        self.wallet.reset()
        self.injector.reset()
        self._reset_counters()
        return await self.state(request)

    def _reset_counters(self):
        self.counters = {"calls": dict.fromkeys(CALLS, 0), "bad_signatures": 0, "invalid": 0}

    async def _start(self, app):
        await self.journal.start()

    async def _close(self, app):
        await self.journal.close()


def _answer(data):
    return web.Response(body=json.dumps(data).encode(), content_type=JSON)


def _error(status, message):
    return web.Response(status=status, body=json.dumps({"error": message}).encode(), content_type=JSON)


def _drop(request):
    """Close the connection without an answer (the ``drop`` fault). The HTTP error raised ends
    the handler quietly: aiohttp finds no connection to write it to."""
    if request.transport is not None:
        request.transport.abort()
    raise web.HTTPInternalServerError(text="fault injected: connection dropped")


async def _json_object(request):
    data = loads(await request.read())  # BadCall: a ValueError
    if not isinstance(data, dict):
        raise ValueError("the body is not a JSON object")
    return data
