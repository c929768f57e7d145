"""``rtp`` subcommand of the engine CLI: exact RTP of a variant (RULES 5, 8).

Wire with ``add_subparser(subparsers)``; the parser gets ``func=run`` as its default, so a main
that does ``args.func(args)`` calls it.
"""
from __future__ import annotations

import json
import sys


def add_subparser(subparsers):
    """Register ``rtp --variant {classic,premium,boundless} [--json]`` on an argparse subparsers
    object and return the new parser (RULES 5, 8)."""
    p = subparsers.add_parser("rtp", help="exact RTP of the main game and side bets of a variant",
                              description="Exact (combinatorial) RTP of a variant's main game under the "
                                          "best composition-dependent strategy, and of each side bet.")
    p.add_argument("--variant", choices=("classic", "premium", "boundless"), default="classic")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.set_defaults(func=run)
    return p


def _pct(x: float, digits: int = 3) -> str:
    return f"{100 * x:.{digits}f}%"


def format_report(rep: dict) -> str:
    """Human-readable lines for a ``report()`` dict."""
    lines = []
    main = rep["main"]
    pub = rep.get("published_rtp")
    lines.append(f"{rep['variant'] or 'custom'}: main game RTP {_pct(main['rtp'])}"
                 + (f" (published {_pct(pub, 2)})" if pub else "")
                 + ", best composition-dependent strategy, exact")
    acts = ", ".join(f"{k} {_pct(v, 2)}" for k, v in sorted(main["first_action_frequency"].items(),
                                                            key=lambda kv: -kv[1]))
    lines.append(f"  first action: {acts}")
    dl = ", ".join(f"{k} {_pct(v, 2)}" for k, v in main["dealer_outcomes"].items())
    lines.append(f"  dealer ends: {dl}")
    for bet, info in rep["side_bets"].items():
        lines.append(f"{bet}: RTP {_pct(info['rtp'])} (house edge {_pct(info['house_edge'])})")
        outs = []
        for k, v in info["outcomes"].items():
            odds = info["pay_table"].get(k)
            label = f"{k} {odds:g}:1" if odds is not None else k
            outs.append(f"{label} {_pct(v, 4)}")
        lines.append("  " + ", ".join(outs))
    return "\n".join(lines)


def run(args) -> int:
    """Handler of ``rtp``: print the report of ``args.variant`` (text, or JSON with ``--json``)."""
    from .report import report
    rep = report(args.variant)
    if args.json:
        json.dump(rep, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        print(format_report(rep))
    return 0
