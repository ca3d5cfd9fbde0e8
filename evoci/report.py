"""Reading results back: ``evoci sql``, ``evoci report`` and ``evoci trajectory``.

Every number shown here comes from a SQL view (``sql/views/``); this module only
selects and formats.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from evoci.digest import fmt
from evoci.settings import Paths, location
from evoci.store import connect

# The order the roles act in within one iteration: the architect, then the programmer.
ROLE_ORDER = "case role when 'architect' then 0 when 'programmer' then 1 else 2 end"


def console_for_output() -> Console:
    """A console that does not squeeze tables to 80 columns when the output is a pipe or a file."""
    return Console() if sys.stdout.isatty() else Console(width=150)


def print_report(db: Path, run_id: str, *, gamma: float = 1.0, console: Console | None = None) -> None:
    """The run's scores as its protocol's report prints them (``evoci.<protocol>.report``), and what it left unscored."""
    console = console or console_for_output()
    from evoci.nitr.report import is_nitr_run, print_nitr_report
    from evoci.swe_evo.report import is_swe_evo_run, print_swe_evo_report

    if is_swe_evo_run(db, run_id):
        print_swe_evo_report(db, run_id, console)
        print_completeness(db, run_id, console)
        return
    if is_nitr_run(db, run_id):
        print_nitr_report(db, run_id, console=console)
        print_completeness(db, run_id, console)
        return
    from evoci.swe_bench_cl.report import is_cl_run, print_cl_report

    if is_cl_run(db, run_id):
        print_cl_report(db, run_id, console)
        print_completeness(db, run_id, console)
        return
    from evoci.swe_ci.report import print_swe_ci_report

    print_swe_ci_report(db, run_id, gamma=gamma, console=console)  # every run no other protocol claims


def dataset_counts(con, run_id: str) -> tuple[int, int]:
    """(records the run's dataset held, records that were not loaded), from ``run_completeness``."""
    row = con.execute("select tasks_expected, records_not_loaded from run_completeness where run_id = ?",
                      [run_id]).fetchone()
    return (row[0], row[1]) if row else (0, 0)


def print_completeness(db: Path, run_id: str, console: Console) -> None:
    """Every protocol: the dataset records that were skipped and why, the dataset's size (every
    headline's denominator), and a warning when the run is partial (``run_completeness``)."""
    with connect(db, read_only=True) as con:
        row = con.execute("select tasks_expected, tasks_unscored, unscored_reasons, records_not_loaded "
                          "from run_completeness where run_id = ?", [run_id]).fetchone()
        skipped = con.execute("select message from failures where run_id = ? and node = 'dataset' order by message",
                              [run_id]).fetchall()
    for (message,) in skipped:
        console.print(f"[yellow]skipped:[/] {escape(message)}", soft_wrap=True)
    if row:
        console.print(f"dataset: {row[0]} record(s), {row[0] - row[3]} loaded, {row[3]} not loaded"
                      + (" (listed above)" if row[3] else ""), soft_wrap=True)
    if row and row[1]:
        reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(row[2].items()))
        console.print(f"[yellow]partial run:[/] {row[1]} of the dataset's {row[0]} task(s) have no score ({escape(reasons)}) "
                      "— these numbers are not the whole dataset's", soft_wrap=True)


def run_sql(db: Path | None, query: str, *, output: str = "table") -> int:
    """Run one read-only query and print its rows (the connection is locked down: ``lock_reads``)."""
    import duckdb

    db = location(db) if db else Paths.default().db
    with connect(db, read_only=True) as con:
        try:
            refused = _not_a_read(con, query)
            if refused:
                print(f"evoci: {refused}", file=sys.stderr)
                return 2
            cursor = con.execute(query)
        except duckdb.Error as exc:
            hint = (" — evoci sql reads only the results; to read files, name their folder: --allow-files DIR"
                    if isinstance(exc, duckdb.PermissionException) else "")
            print(f"evoci: query failed: {exc}{hint}", file=sys.stderr)
            return 1
        if cursor.description is None:
            return 0
        columns = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
    if output == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows(rows)
    elif output == "json":
        print(json.dumps([dict(zip(columns, row)) for row in rows], default=str, indent=1))
    else:
        table = Table(*columns)
        for row in rows:
            table.add_row(*(fmt(v, 4) for v in row))
        console_for_output().print(table)
        print(f"{len(rows)} row(s)")
    return 0


READ_STATEMENTS = ("SELECT", "EXPLAIN", "CALL")


def _not_a_read(con, query: str) -> str | None:
    """Why ``query`` is not something ``evoci sql`` runs (empty, or a statement that is not a read), else None."""
    statements = con.extract_statements(query)
    if not statements:
        return 'the query is empty — pass SQL, e.g. evoci sql "select * from runs"'
    for statement in statements:
        kind = statement.type.name
        if kind not in READ_STATEMENTS:
            return (f"evoci sql only reads the results: {kind} statements are refused ({statement.query.strip()[:60]!r})"
                    " — use select, describe, show, summarize or explain")
    return None


def print_trajectory(db: Path, run_id: str, task_id: str, iteration: int, *, role: str | None = None) -> int:
    """Each agent's outcome, model calls and messages in one iteration."""
    console = console_for_output()
    with connect(db, read_only=True) as con:
        rows = con.execute(
            f"""select role, status, message, seconds, trajectory from trajectories
               where run_id = ? and task_id = ? and iteration = ? and (? is null or role = ?)
               order by {ROLE_ORDER}, role""",
            [run_id, task_id, iteration, role, role],
        ).fetchall()
        calls = con.execute(
            f"""select role, call_index, model, input_tokens, output_tokens, cached_tokens, cost_usd, latency_s,
                      finish_reason, error from agent_calls
               where run_id = ? and task_id = ? and iteration = ? order by {ROLE_ORDER}, role, node_try, node_run, call_index""",
            [run_id, task_id, iteration],
        ).fetchall()
    if not rows:
        print(f"evoci: no trajectory for run {run_id!r}, task {task_id!r}, iteration {iteration}", file=sys.stderr)
        return 1
    for role_name, status, message, seconds, trajectory in rows:
        console.rule(f"{role_name} — {status} in {fmt(seconds, 1)} s")
        if message:
            console.print(message)
        for step in json.loads(trajectory or "[]"):
            console.print_json(data=step)
    table = Table("role", "#", "model", "in", "out", "cached", "cost $", "latency s", "finish", "error",
                  title="model calls", title_justify="left")
    for row in calls:
        table.add_row(*(fmt(v, 4) for v in row))
    console.print(table)
    return 0
