"""``evoci curate REPO…``: SWE-CI's own command, mining tasks from repositories (the ``curate`` flow)."""

from __future__ import annotations

import argparse

from evoci.swe_ci.curation import CurateConfig

_DEFAULTS = CurateConfig()


def cmd_curate(args: argparse.Namespace) -> int:
    from evoci.domain import SandboxConfig
    from evoci.flows.curate import curate

    config = CurateConfig(ref=args.ref, min_changed_lines=args.min_changed_lines, min_gap=args.min_gap,
                          tests_dir=args.tests_dir, concurrency=args.concurrency)
    kept = curate(args.repos, config, SandboxConfig(kind=args.sandbox), output=args.output, home=args.home,
                  db=args.db, run_id=args.run_id)
    print(f"{len(kept)} pair(s) kept; every pair and its reason: evoci sql \"select * from curation_pairs\"")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("curate", help="mine SWE-CI tasks (base → oracle pairs) from git repositories")
    p.add_argument("repos", nargs="+", help="local git repositories")
    p.add_argument("--ref", default=_DEFAULTS.ref, help="branch or commit whose first-parent history is mined (default: HEAD)")
    p.add_argument("--min-changed-lines", type=int, default=_DEFAULTS.min_changed_lines,
                   help=f"least lines changed outside tests (default: {_DEFAULTS.min_changed_lines}, as the paper)")
    p.add_argument("--min-gap", type=int, default=_DEFAULTS.min_gap,
                   help=f"least more target tests passing on the oracle than on the base (default: {_DEFAULTS.min_gap})")
    p.add_argument("--tests-dir", default=_DEFAULTS.tests_dir, help="the test folder (default: tests)")
    p.add_argument("--concurrency", type=int, default=_DEFAULTS.concurrency, help="pairs checked at once (default: 2)")
    p.add_argument("--sandbox", default="local", help="where tests run: local, docker or host (default: local)")
    p.add_argument("--output", help="the dataset JSONL to write (default: <home>/curation/<run id>.jsonl)")
    p.add_argument("--run-id", help="name the curation run (default: derived from the repositories and config)")
    p.add_argument("--home", help="evoci's folder (default: $EVOCI_HOME or ./.evoci)")
    p.add_argument("--db", help="DuckDB results file (default: $EVOCI_DB or <home>/evoci.duckdb)")
    p.add_argument("-v", "--verbose", action="store_true", help="show Prefect's logs")
    p.set_defaults(func=cmd_curate)
