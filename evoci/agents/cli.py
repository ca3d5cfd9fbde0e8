"""``evoci agents install NAME[@VERSION]`` and ``evoci agents list``: the CLIs evoci can run.

The main CLI registers these; the work is in ``evoci.agents.install``.
"""

from __future__ import annotations

import argparse
import json


def cmd_install(args: argparse.Namespace) -> int:
    from evoci.agents.install import install

    for spec in args.spec:
        done = install(spec, home=args.home)
        print(f"evoci: {done.name} {done.version} — {done.program}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from evoci.agents.install import PACKAGES, installed, tools_dir

    found = installed(args.home)
    if args.format == "json":
        print(json.dumps([i.as_dict() for i in found], indent=2))
        return 0
    print(f"tools folder: {tools_dir(args.home)}")
    for name, package in PACKAGES.items():
        mine = [i for i in found if i.name == name]
        if not mine:
            print(f"  {name:<15} not installed (pinned {package.version}: evoci agents install {name})")
        for item in mine:
            pin = " (pinned)" if item.version == package.version else ""
            print(f"  {name:<15} {item.version}{pin}  {item.program}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from evoci.agents.install import PACKAGES

    agents = sub.add_parser("agents", help="install and list the agent CLIs evoci runs (--agent NAME)")
    agents_sub = agents.add_subparsers(dest="agents_command", required=True, metavar="COMMAND")
    inst = agents_sub.add_parser("install", help=f"install CLIs from npm or PyPI into evoci's tools folder: {', '.join(PACKAGES)}")
    inst.add_argument("spec", nargs="+", metavar="NAME[@VERSION]", help="default version: evoci's pinned one")
    inst.add_argument("--home", help="evoci's folder (tools go to <home>/tools unless $EVOCI_TOOLS is set)")
    inst.set_defaults(func=cmd_install)
    lst = agents_sub.add_parser("list", help="installed CLIs: name, version, program")
    lst.add_argument("--home", help="evoci's folder (tools in <home>/tools unless $EVOCI_TOOLS is set)")
    lst.add_argument("--format", choices=["table", "json"], default="table")
    lst.set_defaults(func=cmd_list)
