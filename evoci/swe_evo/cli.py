"""``evoci run`` for SWE-EVO: records (or ``swe-evo-demo``) through the ``swe_evo`` flow, then the rates.

    evoci run swe-evo-demo --agent gold
    evoci run records/ --repos ~/clones --agent llm --model gpt-4.1 --judge-model gpt-4.1
    evoci run records/ --predictions output.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape
from evoci.cli_common import parse_options, print_run_report, run_config


def add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--predictions", metavar="FILE", help="SWE-EVO: grade an OpenHands output.jsonl or SWE-agent preds.json as-is")
    p.add_argument("--judge-model", metavar="MODEL", help="SWE-EVO: label each unresolved instance with the paper's "
                   "failure taxonomy, judged by this model")
    p.add_argument("--judge-option", action="append", metavar="KEY=VALUE", help="judge model setting, e.g. provider=anthropic")


def cmd_run(args: argparse.Namespace) -> int:
    """SWE-EVO: one agent (or a predictions file) per instance, graded; then the rates."""
    from evoci.domain import AgentConfig
    from evoci.errors import InputError, LeaseLost, RunBusy
    from evoci.flows.swe_evo import swe_evo
    from evoci.report import console_for_output

    console = console_for_output()
    config = run_config(args, "swe-evo")
    if args.predictions:
        path = Path(args.predictions).absolute()
        if not path.is_file():
            raise SystemExit(f"evoci: predictions file {args.predictions} not found")
        config = config.model_copy(update={"programmer": AgentConfig(kind="predictions", options={"path": str(path)})})
    judge = None
    if args.judge_model:
        judge = AgentConfig(kind="llm", model=args.judge_model, options=parse_options(args.judge_option, "--judge-option"))
    agent = config.programmer.kind
    console.print(f"[bold]evoci[/] SWE-EVO — dataset {args.dataset}, agent {agent}, sandbox {config.sandbox.kind}")
    from evoci import ephemeral

    ephemeral.start()
    failed = False
    try:
        summaries = swe_evo(args.dataset, config, repos=args.repos, home=args.home, db=args.db, judge=judge,
                            environments=args.environments, task_deployment=getattr(args, "task_deployment", None))
    except (InputError, RunBusy, LeaseLost):
        # refused before anything ran (a changed config under this run id, an empty dataset), or another
        # process writes this run: its results are not this command's to show
        raise
    except Exception as exc:  # already recorded; say it plainly, then show what was scored and skipped
        console.print(f"[red]run ended with failures:[/] {escape(str(exc))}")
        summaries, failed = [], True
    return print_run_report(args, "swe-evo", summaries, failed, console, "no instance could be loaded")
