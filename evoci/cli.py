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

The parser is built from registered modules: each of ``COMMANDS`` adds its commands
(``register(sub)``), and each protocol of ``PROTOCOL_CLIS`` adds its own options to ``run`` and
``demo`` (``add_run_options(p)``) and runs its datasets (``cmd_run(args)``). What they share lives
in ``evoci.cli_common``; none of them imports this module.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from evoci.cli_common import prefect_defaults, results_db, results_options, run_config, run_options, selection, start_run

# Modules that register commands of their own: register(sub).
COMMANDS = ("evoci.sandbox.docker.cli", "evoci.cli_ops", "evoci.swe_ci.cli", "evoci.nitr.cli", "evoci.agents.cli")
# Protocols whose datasets `evoci run` hands over whole: add_run_options(p), cmd_run(args) -> exit code.
# NITR runs here, through the nitr flow (``evoci.cli_common.start_run``).
PROTOCOL_CLIS = {"swe-ci": "evoci.swe_ci.cli", "swe-evo": "evoci.swe_evo.cli", "swe-bench-cl": "evoci.swe_bench_cl.cli"}


def cmd_run(args: argparse.Namespace) -> int:
    from evoci.preflight import check_run_config
    from evoci.protocols import detect_protocol

    protocol = detect_protocol(args.dataset, args.protocol)  # from whole records, never a file's first bytes
    if protocol == "nitr" and not args.dataset.startswith("nitr"):
        args.dataset = f"nitr:{args.dataset}"
    check_run_config(run_config(args, protocol))  # before anything is recorded
    if protocol in PROTOCOL_CLIS:
        return importlib.import_module(PROTOCOL_CLIS[protocol]).cmd_run(args)
    from evoci.nitr.suites import run_dataset_name, selected_suite
    from evoci.report import console_for_output

    console = console_for_output()
    if getattr(args, "split", None):  # read as a SWE-CI release's split, as it always was: a NITR source has none
        from evoci.swe_ci.cli import resolve_split

        if not resolve_split(args, console):
            return 2
    config = run_config(args, "nitr")
    name = run_dataset_name(args.dataset, selected_suite(args.dataset, selection(args.select)))

    def flow(run) -> list:
        from evoci.flows.nitr import nitr

        nitr(args.dataset, config, select=selection(args.select), home=run.home, db=run.db,
             task_deployment=getattr(args, "task_deployment", None))
        return []  # a NITR run refuses no task: its probes' outcomes are in the report

    return start_run(args, config, name, console, flow, f"{config.attempts} attempt(s) per probe")


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
            from evoci.swe_ci.report_html import write_html

            print(f"evoci: wrote {write_html(db, run_id, Path(args.html))}")
            return 0
        print_report(db, run_id, gamma=args.gamma)
    return 0


def cmd_trajectory(args: argparse.Namespace) -> int:
    from evoci.report import print_trajectory

    return print_trajectory(results_db(args), args.run_id, args.task_id, args.iteration, role=args.role)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evoci", description="Measure how well coding agents maintain software.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="evolve the built-in demo task with the human-replay agent and print its scores")
    _all_run_options(demo)
    demo.set_defaults(func=cmd_run, dataset="demo")

    run = sub.add_parser("run", help="evolve every task of a dataset")
    run.add_argument("dataset", help="`demo`, a JSONL file of tasks, a SWE-CI release folder (with --split), "
                     "`swe-evo-demo`, SWE-EVO records (file or folder), `nitr` (built-in NITR probes), `nitr:<checkout>`, "
                     "`swe-bench-cl-demo`, or a SWE-Bench-CL curriculum JSON")
    run.add_argument("--task-deployment", metavar="FLOW/NAME",
                     help="run each task as a flow run of this deployment on a work pool, so any worker (on any host) "
                          "takes it: evolve/NAME (SWE-CI tasks), swe_evo_instance/NAME (SWE-EVO instances), "
                          "nitr_probe_by_id/NAME (NITR probes), continual_sequence/NAME (SWE-Bench-CL sequences); "
                          "needs --store postgresql://… (see `evoci deploy`)")
    run.add_argument("--split", help="the release's split to run: reads <release>/metadata/<split>.csv")
    _all_run_options(run)
    run.set_defaults(func=cmd_run)

    sql = sub.add_parser("sql", help="query the results database, read-only")
    sql.add_argument("query", help='e.g. "select * from evoscore(gamma := 1.5)"')
    results_options(sql)
    sql.add_argument("--format", choices=["table", "csv", "json"], default="table")
    sql.add_argument("--allow-files", action="append", metavar="DIR",
                     help="let the query read files under DIR (read_csv, read_json, …); nothing is ever written (repeatable)")
    sql.set_defaults(func=cmd_sql)

    report = sub.add_parser("report", help="a run's scores")
    report.add_argument("--run-id", help="default: the latest run")
    report.add_argument("--gamma", type=float, default=1.0, help="EvoScore's γ (default: 1)")
    results_options(report)
    report.add_argument("--html", metavar="FILE", help="write the run's summary, tables and plots to one self-contained HTML file")
    report.set_defaults(func=cmd_report)

    traj = sub.add_parser("trajectory", help="what the agents did in one iteration")
    traj.add_argument("run_id")
    traj.add_argument("task_id")
    traj.add_argument("iteration", type=int)
    traj.add_argument("--role", choices=["architect", "programmer"])
    results_options(traj)
    traj.set_defaults(func=cmd_trajectory)

    for name in COMMANDS:
        try:
            module = importlib.import_module(name)
        except ImportError:  # the docker sandbox's commands need the docker SDK
            if name != "evoci.sandbox.docker.cli":
                raise
            continue
        module.register(sub)
    return parser


def _all_run_options(p: argparse.ArgumentParser) -> None:
    run_options(p)
    for name in PROTOCOL_CLIS.values():
        importlib.import_module(name).add_run_options(p)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    prefect_defaults(getattr(args, "verbose", False), args.command)
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
