"""The command line: ``python -m operator_wallet --port 8100 --secret S [--state FILE]
[--currency-units EUR=2,USD=2,FUN=2] [--initial-balance 1000.00] [fault options]``.

Serves until SIGINT or SIGTERM, then writes and fsyncs the state file. Prints one line,
``operator wallet on http://HOST:PORT ...``, once it listens. Exits with status 2 on a bad
argument or a state file it cannot replay."""

import argparse
import dataclasses
import logging
import sys

from aiohttp import web

from operator_wallet import journal
from operator_wallet.faults import Faults, Injector
from operator_wallet.money import Currencies
from operator_wallet.server import WalletServer
from operator_wallet.wallet import Wallet


def parser():
    p = argparse.ArgumentParser(prog="python -m operator_wallet",
                                description="The reference operator wallet (docs/wallet-api.md).")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8100, help="port to listen on (default 8100)")
    p.add_argument("--secret", required=True, help="the operator's wallet secret: the key of X-Signature")
    p.add_argument("--state", metavar="FILE",
                   help="the journal: replayed at start, appended to (default: the books live in memory only)")
    p.add_argument("--currency-units", type=_currencies, default=Currencies.parse("EUR=2,USD=2,FUN=2"),
                   metavar="CODE=N,...", help="currencies kept and their minor units (default EUR=2,USD=2,FUN=2)")
    p.add_argument("--initial-balance", default="1000.00",
                   help="a new player's balance in each currency (default 1000.00)")
    group = p.add_argument_group("faults", "of debit, credit and rollback calls (down: of every protocol call), "
                                           "as in POST /_admin/faults (docs/wallet-api.md); off by default")
    for field in dataclasses.fields(Faults):
        option, help = "--" + field.name.replace("_", "-"), field.metadata["help"]
        if isinstance(field.default, bool):
            group.add_argument(option, action="store_true", default=argparse.SUPPRESS, help=help)
        elif isinstance(field.default, tuple):
            group.add_argument(option, type=_codes, metavar="CODE,...", default=argparse.SUPPRESS, help=help)
        else:
            kind, metavar = {"rate": (float, "RATE"), "ms": (int, "MS")}.get(field.name.rpartition("_")[2], (int, "N"))
            group.add_argument(option, type=kind, metavar=metavar, default=argparse.SUPPRESS, help=help)
    return p


def _currencies(text):
    try:
        return Currencies.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _codes(text):
    return [code.strip() for code in text.split(",") if code.strip()]


def main(argv=None):
    p = parser()
    args = vars(p.parse_args(argv))
    fault_names = {field.name for field in dataclasses.fields(Faults)}
    try:
        faults = Faults().updated({name: value for name, value in args.items() if name in fault_names})
    except ValueError as error:
        p.error(str(error))
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    state = args["state"]
    try:
        records = journal.read(state) if state else []
        books = journal.Journal(state)
        injector = Injector(faults)
        wallet = Wallet(args["currency_units"], args["initial_balance"], injector.refusal, books)
        wallet.load(records)
    except (OSError, ValueError, KeyError, journal.JournalError) as error:
        p.exit(2, f"{p.prog}: cannot start: {error!r}\n")
    server = WalletServer(wallet, injector, books, args["secret"].encode())
    url = f"http://{args['host']}:{args['port']}"
    where = f"state {state}, {len(records)} records replayed" if state else "in memory"

    def listening(_message):
        print(f"operator wallet on {url} ({where})", flush=True)

    web.run_app(server.app(), host=args["host"], port=args["port"], access_log=None, shutdown_timeout=1,
                print=listening)
    sys.stdout.flush()
