"""``evoci nitr conformance CHECKOUT``: evoci's module verdicts beside NITR's own evaluator's.

    evoci nitr conformance ../NITR                       # every starter and shipped fixture
    evoci nitr conformance ../NITR --select id=001 --json report.json

Exit 0 only when no module differs (see ``evoci.nitr.conformance``).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from evoci.cli_common import selection


def cmd_conformance(args: argparse.Namespace) -> int:
    from evoci.nitr.conformance import compare, summary

    results, unloaded = compare(Path(args.checkout), python=args.python, select=selection(args.select),
                                timeout=args.timeout, progress=lambda line: print(line, flush=True))
    print(summary(results, unloaded))
    if args.json:
        Path(args.json).write_text(json.dumps({"unloaded": unloaded, "results": [
            {**asdict(c), "differences": c.differences(), "official_category": c.official.category,
             "evoci_category": c.evoci.category} for c in results]}, indent=2))
    return 1 if unloaded or any(c.differences() for c in results) else 0


def register(sub: argparse._SubParsersAction) -> None:
    nitr = sub.add_parser("nitr", help="NITR tools")
    tools = nitr.add_subparsers(dest="nitr_command", required=True, metavar="TOOL")
    conf = tools.add_parser("conformance", help="grade a NITR checkout's starters and submission fixtures with its "
                            "own evaluator and with evoci's; print the module differences (exit 1 if any)")
    conf.add_argument("checkout", help="a NITR checkout (cases/, docs/, evaluator/, third_party/ with its submodules)")
    conf.add_argument("--python", default="python3", help="the Python that runs the official evaluator (default: python3)")
    conf.add_argument("--select", action="append", metavar="KEY=VALUE", help="only these cases (as for `evoci run`)")
    conf.add_argument("--timeout", type=float, default=1800, help="seconds per grading (default: 1800)")
    conf.add_argument("--json", metavar="FILE", help="also write every verdict to FILE")
    conf.set_defaults(func=cmd_conformance)
