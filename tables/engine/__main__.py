"""Command line: ``python -m tables.engine <command>``.

  settle FILE.json | -     settle a round record (or a case file with a "record" key); prints
                           the result JSON; an invalid record prints the error to stderr, exit 2
  deal --variant V --seed N
                           print one random legal round record

Adding a subcommand: write ``def add_xxx(sub)`` that creates its parser with
``sub.add_parser(...)`` and sets ``func=`` to a handler ``(args) -> exit code``, then append it to
``COMMANDS``.
"""
from __future__ import annotations

import argparse
import json
import random
import sys

from .play import deal_round
from .record import InvalidRecord
from .rtp.cli import add_subparser as add_rtp
from .rules import VARIANTS
from .settling import settle


def _load(path: str):
    text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    data = json.loads(text)
    if isinstance(data, dict) and "record" in data and "format" not in data:
        data = data["record"]  # a case file of tests/data/cases
    return data


def cmd_settle(args) -> int:
    try:
        record = _load(args.file)
    except (OSError, ValueError) as e:
        print(f"cannot read {args.file}: {e}", file=sys.stderr)
        return 2
    try:
        result = settle(record, minor_units=args.minor_units)
    except InvalidRecord as e:
        print(str(e), file=sys.stderr)
        return 2
    json.dump(result.to_dict(), sys.stdout, indent=args.indent)
    sys.stdout.write("\n")
    return 0


def add_settle(sub) -> None:
    p = sub.add_parser("settle", help="settle a round record (JSON file or - for stdin)")
    p.add_argument("file", help="round record JSON, a case file with a 'record' key, or -")
    p.add_argument("--minor-units", type=int, default=2, help="currency decimals (default 2)")
    p.add_argument("--indent", type=int, default=1)
    p.set_defaults(func=cmd_settle)


def cmd_deal(args) -> int:
    rng = random.Random(args.seed)
    record = deal_round(args.variant, rng, players=args.players)
    json.dump(record, sys.stdout, indent=args.indent)
    sys.stdout.write("\n")
    return 0


def add_deal(sub) -> None:
    p = sub.add_parser("deal", help="print one random legal round record")
    p.add_argument("--variant", required=True, choices=VARIANTS)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--players", type=int, default=None, help="boundless: number of players")
    p.add_argument("--indent", type=int, default=1)
    p.set_defaults(func=cmd_deal)


COMMANDS = [add_settle, add_deal, add_rtp]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tables.engine", description="blackjack rules engine")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
