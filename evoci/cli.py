"""The ``evoci`` command line.

    evoci demo                      evolve the built-in demo task, print its scores
    evoci run DATASET [options]     evolve every task of a dataset (JSONL, or `demo`), grade a
                                    SWE-EVO dataset (`swe-evo-demo`, SWE-bench-format records), run
                                    NITR probes (`nitr`, `nitr:<path>`), or run SWE-Bench-CL sequences
                                    (`swe-bench-cl-demo`, curriculum JSON)
    evoci sql "QUERY"               query the results database (read-only)
    evoci report [--run-id ID]      a run's scores as a table (or --html FILE)
    evoci trajectory RUN TASK ITER  what the agents did in one iteration
    evoci agents install|list       the agent CLIs evoci runs (see evoci/agents/cli.py)
    evoci server | serve | retry    operate from the Prefect UI (see evoci/cli_ops.py)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def _prefect_defaults(verbose: bool, command: str = "") -> None:
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


def _parse_options(items: list[str] | None, flag: str) -> dict[str, object]:
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


def _config(args: argparse.Namespace, protocol: str = "swe-ci"):
    """The run's config from the options (a preset agent, --agent claude-code …, resolved for ``protocol``);
    a value pydantic refuses is an InputError naming it."""
    from pydantic import ValidationError

    from evoci.errors import InputError

    try:
        return _make_config(args, protocol)
    except ValidationError as exc:  # e.g. a --run-id that is not a folder name
        problems = "; ".join(str(e["ctx"]["error"]) if e["type"] == "value_error"  # says its field itself
                             else f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise InputError(problems) from None


def _make_config(args: argparse.Namespace, protocol: str):
    from evoci.agents.cli_agent import resolve
    from evoci.domain import AgentConfig, RunConfig, SandboxConfig

    agent_options = _parse_options(args.agent_option, "--agent-option")
    architect = AgentConfig(kind=args.architect_agent or args.agent, model=args.architect_model or args.model,
                            options=agent_options)
    programmer = AgentConfig(kind=args.programmer_agent or args.agent, model=args.programmer_model or args.model,
                             options=agent_options)
    if protocol == "swe-ci":
        architect = resolve(architect, protocol)
    programmer = resolve(programmer, protocol)
    if args.architect_block:
        architect = _from_model_block(args.architect_block)
    if args.programmer_block:
        programmer = _from_model_block(args.programmer_block)
    sandbox = SandboxConfig(kind=args.sandbox, options=_parse_options(args.sandbox_option, "--sandbox-option"))
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


def _selection(items: list[str] | None) -> dict[str, list[str]]:
    """``--select KEY=VALUE`` items as key → accepted values (a key given twice accepts either value)."""
    select: dict[str, list[str]] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"evoci: --select takes KEY=VALUE (id, language, dimension, granularity), got {item!r}")
        select.setdefault(key, []).extend(v for v in value.split(",") if v)
    return select


def _from_model_block(name: str):
    """An llm AgentConfig naming a saved ModelBlock; its settings (not its key) go on record."""
    from evoci.blocks.model import ModelBlock
    from evoci.domain import AgentConfig

    block = ModelBlock.load(name)
    return AgentConfig(kind="llm", model=block.model,
                       options={"model_block": name, "block_settings": block.config().model_dump(mode="json")})


def cmd_run(args: argparse.Namespace) -> int:
    from evoci.preflight import check_run_config
    from evoci.protocols import detect_protocol

    protocol = detect_protocol(args.dataset, args.protocol)  # from whole records, never a file's first bytes
    if protocol == "nitr" and not args.dataset.startswith("nitr"):
        args.dataset = f"nitr:{args.dataset}"
    check_run_config(_config(args, protocol))  # before anything is recorded
    if protocol == "swe-evo":
        return cmd_run_swe_evo(args)
    if protocol == "swe-bench-cl":
        from evoci.swe_bench_cl.cli import cmd_run_continual

        return cmd_run_continual(args, _config(args, "swe-bench-cl"))
    from evoci.datasets import dataset_name
    from evoci.identity import check_run
    from evoci.report import console_for_output
    from evoci.runtime import RunContext
    from evoci.store import lease

    console = console_for_output()
    if getattr(args, "split", None):  # a SWE-CI release folder: its split file is the dataset
        from evoci.errors import DatasetError
        from evoci.releases import split_file

        try:
            args.dataset = str(split_file(Path(args.dataset), args.split).absolute())
        except DatasetError as exc:
            console.print(f"[red]{exc}[/]")
            return 2
    nitr = protocol == "nitr"
    config = _config(args, "nitr" if nitr else "swe-ci")
    name = dataset_name(args.dataset)
    if nitr:
        from evoci.nitr.suites import run_dataset_name, selected_suite

        name = run_dataset_name(args.dataset, selected_suite(args.dataset, _selection(args.select)))
    else:
        from evoci.datasets import load_dataset
        from evoci.settings import Paths

        load_dataset(args.dataset, Paths.of(args.home))  # an empty or missing dataset is refused before a run exists
    run = RunContext.create(config, name, home=args.home, db=args.db)
    check_run(run.db, run.run_id, run.config, run.dataset)  # a changed config never joins a recorded run
    with lease.scope():
        lease.acquire(run.db, run.run_id)  # refused at once if another live process writes this run
        return _run_claimed(args, config, run, console, nitr)


def _run_claimed(args: argparse.Namespace, config, run, console, nitr: bool) -> int:
    """``evoci run`` once this process holds the run's lease: the flow, then the scores."""
    from evoci.flows.benchmark import benchmark
    from evoci.report import print_report
    from evoci.ui import LiveProgress

    console.print(f"[bold]evoci[/] run [cyan]{run.run_id}[/] — dataset {args.dataset}, "
                  f"agent {config.programmer.kind}, sandbox {config.sandbox.kind}, "
                  + (f"{config.attempts} attempt(s) per probe" if nitr else f"≤ {config.max_iterations} iterations"))
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
            if nitr:
                from evoci.flows.nitr import nitr as nitr_flow

                nitr_flow(args.dataset, config, select=_selection(args.select), home=run.home, db=run.db)
            else:
                summaries = benchmark(args.dataset, config, home=run.home, db=run.db,
                                      task_deployment=getattr(args, "task_deployment", None))
        except (RunBusy, LeaseLost):
            raise  # another process writes this run: its results are not this command's to show
        except Exception as exc:  # already recorded; say it plainly, then show what was scored
            console.print(f"[red]run ended with failures:[/] {exc}")
            failed = True
    refused = [(s.task_id, s.reason or "") for s in summaries if s.refused]
    print_refused(console, refused)
    if recorded(run.db, run.run_id):
        print_report(run.db, run.run_id, console=console)
    code = exit_code(run.db, run.run_id, console, refused=refused)
    return 1 if failed else code


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


def cmd_run_swe_evo(args: argparse.Namespace) -> int:
    """SWE-EVO: one agent (or a predictions file) per instance, graded; then the rates."""
    from evoci.domain import AgentConfig
    from evoci.errors import InputError, LeaseLost, RunBusy
    from evoci.flows.swe_evo import swe_evo
    from evoci.report import console_for_output

    console = console_for_output()
    config = _config(args, "swe-evo")
    if args.predictions:
        path = Path(args.predictions).absolute()
        if not path.is_file():
            raise SystemExit(f"evoci: predictions file {args.predictions} not found")
        config = config.model_copy(update={"programmer": AgentConfig(kind="predictions", options={"path": str(path)})})
    judge = None
    if args.judge_model:
        judge = AgentConfig(kind="llm", model=args.judge_model, options=_parse_options(args.judge_option, "--judge-option"))
    agent = config.programmer.kind
    console.print(f"[bold]evoci[/] SWE-EVO — dataset {args.dataset}, agent {agent}, sandbox {config.sandbox.kind}")
    from evoci import ephemeral

    ephemeral.start()
    failed = False
    try:
        summaries = swe_evo(args.dataset, config, repos=args.repos, home=args.home, db=args.db, judge=judge,
                            environments=args.environments)
    except (InputError, RunBusy, LeaseLost):
        # refused before anything ran (a changed config under this run id, an empty dataset), or another
        # process writes this run: its results are not this command's to show
        raise
    except Exception as exc:  # already recorded; say it plainly, then show what was scored and skipped
        console.print(f"[red]run ended with failures:[/] {exc}")
        summaries, failed = [], True
    return print_run_report(args, "swe-evo", summaries, failed, console, "no instance could be loaded")


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


def cmd_sql(args: argparse.Namespace) -> int:
    from evoci.report import run_sql
    from evoci.store.db import locked_reads

    db = results_db(args)
    with locked_reads(tuple(args.allow_files or ())):  # the results and nothing else (DuckDB's file access off)
        return run_sql(db, args.query, output=args.format)


def cmd_report(args: argparse.Namespace) -> int:
    from evoci.digest import latest_run_id as latest_run
    from evoci.report import print_report

    from evoci.store.db import locked_reads

    db = results_db(args)
    with locked_reads():  # the results and nothing else, as `evoci sql`
        run_id = args.run_id or latest_run(db)
        if args.html:
            from evoci.report_html import write_html

            print(f"evoci: wrote {write_html(db, run_id, Path(args.html))}")
            return 0
        print_report(db, run_id, gamma=args.gamma)
    return 0


def cmd_trajectory(args: argparse.Namespace) -> int:
    from evoci.report import print_trajectory

    return print_trajectory(results_db(args), args.run_id, args.task_id, args.iteration, role=args.role)


def _run_options(p: argparse.ArgumentParser) -> None:
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
    p.add_argument("--predictions", metavar="FILE", help="SWE-EVO: grade an OpenHands output.jsonl or SWE-agent preds.json as-is")
    p.add_argument("--judge-model", metavar="MODEL", help="SWE-EVO: label each unresolved instance with the paper's "
                   "failure taxonomy, judged by this model")
    p.add_argument("--judge-option", action="append", metavar="KEY=VALUE", help="judge model setting, e.g. provider=anthropic")
    from evoci.swe_bench_cl.cli import add_options as add_continual_options

    add_continual_options(p)
    _results_options(p)


def _results_options(p: argparse.ArgumentParser) -> None:
    """--home, --db and -v, with the same defaults for every command that writes or reads results."""
    p.add_argument("--home", help="evoci's folder for workspaces and results (default: $EVOCI_HOME or ./.evoci)")
    p.add_argument("--db", "--store", dest="db", metavar="FILE|URL",
                   help="results store: a DuckDB file, or a PostgreSQL server (postgresql://…) that many processes "
                        "and hosts write at once (default: $EVOCI_STORE, $EVOCI_DB or <home>/evoci.duckdb)")
    p.add_argument("-v", "--verbose", action="store_true", help="show Prefect's logs and full tracebacks")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evoci", description="Measure how well coding agents maintain software.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="evolve the built-in demo task with the human-replay agent and print its scores")
    _run_options(demo)
    demo.set_defaults(func=cmd_run, dataset="demo")

    run = sub.add_parser("run", help="evolve every task of a dataset")
    run.add_argument("dataset", help="`demo`, a JSONL file of tasks, a SWE-CI release folder (with --split), "
                     "`swe-evo-demo`, SWE-EVO records (file or folder), `nitr` (built-in NITR probes), `nitr:<checkout>`, "
                     "`swe-bench-cl-demo`, or a SWE-Bench-CL curriculum JSON")
    run.add_argument("--task-deployment", metavar="evolve/NAME",
                     help="SWE-CI: run each task as a flow run of this deployment on a work pool, so any worker "
                          "(on any host) takes it; needs --store postgresql://… (see `evoci deploy`)")
    run.add_argument("--split", help="the release's split to run: reads <release>/metadata/<split>.csv")
    _run_options(run)
    run.set_defaults(func=cmd_run)

    sql = sub.add_parser("sql", help="query the results database, read-only")
    sql.add_argument("query", help='e.g. "select * from evoscore(gamma := 1.5)"')
    _results_options(sql)
    sql.add_argument("--format", choices=["table", "csv", "json"], default="table")
    sql.add_argument("--allow-files", action="append", metavar="DIR",
                     help="let the query read files under DIR (read_csv, read_json, …); nothing is ever written (repeatable)")
    sql.set_defaults(func=cmd_sql)

    report = sub.add_parser("report", help="a run's scores")
    report.add_argument("--run-id", help="default: the latest run")
    report.add_argument("--gamma", type=float, default=1.0, help="EvoScore's γ (default: 1)")
    _results_options(report)
    report.add_argument("--html", metavar="FILE", help="write the run's summary, tables and plots to one self-contained HTML file")
    report.set_defaults(func=cmd_report)

    traj = sub.add_parser("trajectory", help="what the agents did in one iteration")
    traj.add_argument("run_id")
    traj.add_argument("task_id")
    traj.add_argument("iteration", type=int)
    traj.add_argument("--role", choices=["architect", "programmer"])
    _results_options(traj)
    traj.set_defaults(func=cmd_trajectory)

    try:
        from evoci.sandbox.docker.cli import register as register_docker
    except ImportError:
        register_docker = None
    if register_docker:
        register_docker(sub)
    from evoci.cli_ops import register as register_ops

    register_ops(sub)
    from evoci.cli_curate import register as register_curate

    register_curate(sub)
    from evoci.nitr.cli import register as register_nitr

    register_nitr(sub)

    from evoci.agents.cli import register as register_agents

    register_agents(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _prefect_defaults(getattr(args, "verbose", False), args.command)
    from evoci import interrupt

    interrupt.install()  # SIGINT and SIGTERM stop every node within seconds (evoci/interrupt.py)

    from evoci.errors import EXIT_BUSY, EvociError, LeaseLost, RunBusy
    from evoci.interrupt import Interrupted

    try:
        return int(args.func(args) or 0)
    except (RunBusy, LeaseLost) as exc:
        print(f"evoci: {exc}", file=sys.stderr)
        return EXIT_BUSY
    except Interrupted as exc:
        print(f"evoci: {exc} — what finished is recorded and the interrupted task(s) are marked 'interrupted'; "
              "run the same command again to resume", file=sys.stderr)
        return exc.exit_code
    except EvociError as exc:
        print(f"evoci: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("evoci: interrupted — re-run the same command to resume", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug or an unforeseen failure: one line, the traceback only with -v
        if getattr(args, "verbose", False):
            raise
        print(f"evoci: {type(exc).__name__}: {exc} — run the command again with -v for the full traceback",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
