"""SWE-CI's command line: ``evoci run`` for its datasets (the ``benchmark`` flow), and ``evoci curate``.

    evoci run demo                                  # the built-in semverkit task
    evoci run tasks.jsonl --agent llm --model gpt-4.1
    evoci run release/ --split test                 # a release folder's split (metadata/<split>.csv)
    evoci curate REPO…                              # mine base → oracle pairs from repositories
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evoci.cli_common import run_config, start_run
from evoci.swe_ci.curation import CurateConfig

_DEFAULTS = CurateConfig()


def add_run_options(p: argparse.ArgumentParser) -> None:
    """SWE-CI's options are the common ones (``evoci.cli_common.run_options``); its ``--split``
    belongs to ``run`` alone, so the core's parser adds it there."""


def resolve_split(args: argparse.Namespace, console) -> bool:
    """With ``--split``, the dataset is a SWE-CI release folder and its split file becomes the dataset;
    False (said on ``console``) when the release has no such split."""
    if getattr(args, "split", None):
        from evoci.errors import DatasetError
        from evoci.swe_ci.releases import split_file

        try:
            args.dataset = str(split_file(Path(args.dataset), args.split).absolute())
        except DatasetError as exc:
            from rich.markup import escape

            console.print(f"[red]{escape(str(exc))}[/]")
            return False
    return True


def cmd_run(args: argparse.Namespace) -> int:
    """SWE-CI: every task of a dataset evolved through its CI iterations; then the scores."""
    from evoci.report import console_for_output
    from evoci.settings import Paths
    from evoci.swe_ci.datasets import dataset_name, load_dataset

    console = console_for_output()
    if not resolve_split(args, console):
        return 2
    config = run_config(args, "swe-ci")
    name = dataset_name(args.dataset)
    load_dataset(args.dataset, Paths.of(args.home))  # an empty or missing dataset is refused before a run exists

    def flow(run) -> list:
        from evoci.flows.benchmark import benchmark

        return benchmark(args.dataset, config, home=run.home, db=run.db,
                         task_deployment=getattr(args, "task_deployment", None))

    return start_run(args, config, name, console, flow, f"≤ {config.max_iterations} iterations")


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
