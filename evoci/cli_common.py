"""What every ``evoci`` command module shares: the run options, the run's config, a run claimed in this
process (``start_run``), the results store, the report.

``evoci.cli`` builds the parser from registered modules (its own commands, ``evoci.cli_ops``,
each protocol's ``cli``); they all import from here, and none imports ``evoci.cli``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def prefect_defaults(verbose: bool, command: str = "") -> None:
    """Settings Prefect reads at import: quiet, patient with the ephemeral server's start-up.

    Without -v, ``run`` and ``demo`` show only evoci's own lines: each task's progress and how it
    ended, bad dataset lines and the score table. Prefect's console logs (failed runs come with
    full tracebacks) appear with -v, and always in the Prefect UI.
    """
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    if not verbose:
        level = "CRITICAL" if command in ("run", "demo") else "WARNING"
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", level)
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_FLOW_RUNS_LEVEL", level)
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_TASK_RUNS_LEVEL", level)


def parse_options(items: list[str] | None, flag: str) -> dict[str, object]:
    import json

    options: dict[str, object] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"evoci: {flag} takes KEY=VALUE, got {item!r}")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


def run_config(args: argparse.Namespace, protocol: str = "swe-ci"):
    """The run's config from the options (a preset agent, --agent claude-code …, resolved for ``protocol``);
    a value pydantic refuses is an InputError naming it."""
    from pydantic import ValidationError

    from evoci.errors import InputError

    try:
        return _makerun_config(args, protocol)
    except ValidationError as exc:  # e.g. a --run-id that is not a folder name
        problems = "; ".join(str(e["ctx"]["error"]) if e["type"] == "value_error"  # says its field itself
                             else f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise InputError(problems) from None


def _makerun_config(args: argparse.Namespace, protocol: str):
    from evoci.agents.cli_agent import resolve
    from evoci.domain import AgentConfig, RunConfig, SandboxConfig

    agent_options = parse_options(args.agent_option, "--agent-option")
    architect = AgentConfig(kind=args.architect_agent or args.agent, model=args.architect_model or args.model,
                            options=agent_options)
    programmer = AgentConfig(kind=args.programmer_agent or args.agent, model=args.programmer_model or args.model,
                             options=agent_options)
    if protocol == "swe-ci":
        architect = resolve(architect, protocol)
    programmer = resolve(programmer, protocol)
    if args.architect_block:
        architect = from_model_block(args.architect_block)
    if args.programmer_block:
        programmer = from_model_block(args.programmer_block)
    sandbox = SandboxConfig(kind=args.sandbox, options=parse_options(args.sandbox_option, "--sandbox-option"))
    if args.sandbox_block:
        from evoci.blocks.sandbox import SandboxBlock

        sandbox = SandboxBlock.load(args.sandbox_block).config()
    return RunConfig(
        protocol=protocol, run_id=args.run_id, max_iterations=args.max_iterations, architect=architect,
        programmer=programmer, sandbox=sandbox,
        test_timeout_s=args.test_timeout, concurrency=args.concurrency,
        code_quality=getattr(args, "code_quality", False),
        attempts=args.attempts, grade_every_step=args.grade_every_step,
    )


def selection(items: list[str] | None) -> dict[str, list[str]]:
    """``--select KEY=VALUE`` items as key → accepted values (a key given twice accepts either value)."""
    select: dict[str, list[str]] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"evoci: --select takes KEY=VALUE (id, language, dimension, granularity), got {item!r}")
        select.setdefault(key, []).extend(v for v in value.split(",") if v)
    return select


def from_model_block(name: str):
    """An llm AgentConfig naming a saved ModelBlock; its settings (not its key) go on record."""
    from evoci.blocks.model import ModelBlock
    from evoci.domain import AgentConfig

    block = ModelBlock.load(name)
    return AgentConfig(kind="llm", model=block.model,
                       options={"model_block": name, "block_settings": block.config().model_dump(mode="json")})


def recorded(db: Path | str, run_id: str) -> bool:
    """Whether ``run_id`` is in ``db`` (a run that failed before its claim has no scores to show)."""
    from evoci.settings import location
    from evoci.store import reading

    db = location(db)
    if isinstance(db, Path) and not db.exists():
        return False
    with reading(db, run_id=run_id) as con:
        return con.execute("select count(*) from runs where run_id = ?", [run_id]).fetchone()[0] > 0


def results_db(args: argparse.Namespace) -> Path | str:
    """The results store a reading command uses: the same defaults as ``evoci run`` (--db/--store,
    else $EVOCI_STORE or $EVOCI_DB, else <--home or $EVOCI_HOME or ./.evoci>/evoci.duckdb). Pending
    spooled facts of a DuckDB file are written first, so what is read is complete."""
    from evoci.settings import Paths
    from evoci.store import Facts

    db = Paths.of(args.home).results_db(args.db)
    if isinstance(db, Path) and db.exists():
        Facts(db).flush()
    return db


def print_run_report(args: argparse.Namespace, protocol: str, summaries: list, failed: bool, console,
                     nothing: str) -> int:
    """The report of the run a command just ran, with its skipped records, also when nothing loaded or it failed."""
    from evoci.digest import last_finished_run_id
    from evoci.report import print_report
    from evoci.settings import Paths
    from evoci.verdict import exit_code

    db = Paths.of(args.home).results_db(args.db)
    run_id = summaries[0].run_id if summaries else (last_finished_run_id(db, protocol) if not isinstance(db, Path) or db.exists() else None)
    if run_id is not None:
        print_report(db, run_id, console=console)
    if not summaries and not failed:
        console.print(f"[red]{nothing}[/] (each record's reason is listed above as skipped)")
        return 1
    if run_id is None:
        return 1
    code = exit_code(db, run_id, console)
    return 1 if failed else code


def start_run(args: argparse.Namespace, config, dataset: str, console, flow, budget: str) -> int:
    """``evoci run`` of a protocol whose flow runs in this process under the run's lease (SWE-CI, NITR):
    claim the run, then ``flow(run)`` (its task summaries), then what it refused and the scores.
    ``budget`` ends the first line (how much each task may take)."""
    from evoci.identity import check_run
    from evoci.runtime import RunContext
    from evoci.store import lease

    run = RunContext.create(config, dataset, home=args.home, db=args.db)
    check_run(run.db, run.run_id, run.config, run.dataset)  # a changed config never joins a recorded run
    with lease.scope():
        lease.acquire(run.db, run.run_id)  # refused at once if another live process writes this run
        return _run_claimed(args, config, run, console, flow, budget)


def _run_claimed(args: argparse.Namespace, config, run, console, flow, budget: str) -> int:
    """``evoci run`` once this process holds the run's lease: the flow, then the scores."""
    from evoci.report import print_report
    from evoci.ui import LiveProgress

    console.print(f"[bold]evoci[/] run [cyan]{run.run_id}[/] — dataset {args.dataset}, "
                  f"agent {config.programmer.kind}, sandbox {config.sandbox.kind}, {budget}")
    from evoci.store.db import describe

    console.print(f"results: {describe(run.db)}", style="dim")
    from evoci import ephemeral
    from evoci.errors import LeaseLost, RunBusy
    from evoci.verdict import exit_code, print_refused

    if config.sandbox.kind == "docker":
        from evoci.sandbox.docker import install_signal_cleanup

        install_signal_cleanup()  # signal handlers can only be set from the main thread
    ephemeral.start()
    failed, summaries = False, []
    with LiveProgress(console):
        try:
            summaries = flow(run)
        except (RunBusy, LeaseLost):
            raise  # another process writes this run: its results are not this command's to show
        except Exception as exc:  # already recorded; say it plainly, then show what was scored
            from rich.markup import escape  # an exception's text may hold brackets a test id or path has

            console.print(f"[red]run ended with failures:[/] {escape(str(exc))}")
            failed = True
    refused = [(s.task_id, s.reason or "") for s in summaries if s.refused]
    print_refused(console, refused)
    if recorded(run.db, run.run_id):
        print_report(run.db, run.run_id, console=console)
    code = exit_code(run.db, run.run_id, console, refused=refused)
    return 1 if failed else code


def run_options(p: argparse.ArgumentParser) -> None:
    """The options of every command that starts runs (``run``, ``demo``, ``serve``, ``deploy``); a protocol's
    own options are added by its ``add_run_options`` (see ``evoci.cli``)."""
    p.add_argument("--agent", default="replay", help="who plays architect and programmer: replay, llm, command, or an "
                   "agent CLI: claude-code, codex, opencode, mini-swe-agent, aider (install with `evoci agents install`); "
                   "SWE-EVO also: gold, empty; NITR also: reference, api (default: replay, the real history)")
    p.add_argument("--architect-agent", metavar="AGENT", help="the architect's agent (default: --agent)")
    p.add_argument("--programmer-agent", metavar="AGENT", help="the programmer's agent (default: --agent)")
    p.add_argument("--model", help="model for both roles (llm agent)")
    p.add_argument("--architect-model", help="model for the architect (default: --model)")
    p.add_argument("--programmer-model", help="model for the programmer (default: --model)")
    p.add_argument("--architect-block", metavar="NAME", help="a saved evoci-model Prefect block for the architect")
    p.add_argument("--programmer-block", metavar="NAME", help="a saved evoci-model Prefect block for the programmer")
    p.add_argument("--agent-option", action="append", metavar="KEY=VALUE", help="agent setting, e.g. provider=anthropic (repeatable)")
    p.add_argument("--max-iterations", type=int, default=20, metavar="N", help="most CI iterations per task (default: 20)")
    p.add_argument("--sandbox", default="local", help="where agents and tests run: local (bubblewrap), docker, or host (no isolation: "
                   "only for agents you trust; recorded with the run) (default: local)")
    p.add_argument("--sandbox-option", action="append", metavar="KEY=VALUE", help="sandbox setting, e.g. memory=2g (repeatable)")
    p.add_argument("--sandbox-block", metavar="NAME", help="take kind and options from a saved evoci-sandbox Prefect block")
    p.add_argument("--test-timeout", type=float, default=3600.0, metavar="SECONDS", help="kill a test run after this long (default: 3600)")
    p.add_argument("--concurrency", type=int, default=2, help="tasks evolved at once (default: 2)")
    p.add_argument("--code-quality", action="store_true",
                   help="measure each codebase with radon and pylint against the oracle (seconds per codebase)")
    p.add_argument("--select", action="append", metavar="KEY=VALUE",
                   help="NITR: keep probes by id, language, dimension or granularity, e.g. dimension=D2 (repeatable)")
    p.add_argument("--attempts", type=int, default=1, metavar="K", help="NITR: attempts per probe; SWE-Bench-CL: attempts per cell (default: 1)")
    p.add_argument("--grade-every-step", action="store_true", help="NITR: also grade intermediate steps (diagnostic)")
    p.add_argument("--run-id", help="name the run (default: derived from dataset and config, so re-running resumes)")
    p.add_argument("--protocol", choices=["swe-ci", "swe-evo", "swe-bench-cl", "nitr"], help="default: recognised from "
                   "every record's fields — swe-evo for SWE-bench-format records (and `swe-evo-demo`), swe-bench-cl for a "
                   "curriculum JSON (and `swe-bench-cl-demo`), nitr for `nitr`/`nitr:<checkout>`, swe-ci for tasks")
    p.add_argument("--repos", metavar="DIR", help="SWE-EVO: folder of local clones (<owner>__<name>) for records without repo_path")
    p.add_argument("--environments", metavar="FILE", help="SWE-EVO and SWE-Bench-CL: environment specs added to or "
                   "overriding evoci's ({\"owner/name\": [{\"versions\": [...], \"python\": ..., \"packages\": [...]}]}); "
                   "SWE-Bench-CL also takes SWE-bench-style records (instance_id, version, test_cmds, log_parser, ...)")
    results_options(p)


def results_options(p: argparse.ArgumentParser) -> None:
    """--home, --db and -v, with the same defaults for every command that writes or reads results."""
    p.add_argument("--home", help="evoci's folder for workspaces and results (default: $EVOCI_HOME or ./.evoci)")
    p.add_argument("--db", "--store", dest="db", metavar="FILE|URL",
                   help="results store: a DuckDB file, or a PostgreSQL server (postgresql://…) that many processes "
                        "and hosts write at once (default: $EVOCI_STORE, $EVOCI_DB or <home>/evoci.duckdb)")
    p.add_argument("-v", "--verbose", action="store_true", help="show Prefect's logs and full tracebacks")
