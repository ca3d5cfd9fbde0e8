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

from evoci.digest import fmt, load_digest, money, sql_hint
from evoci.settings import Paths, location
from evoci.store import connect

# The order the roles act in within one iteration: the architect, then the programmer.
ROLE_ORDER = "case role when 'architect' then 0 when 'programmer' then 1 else 2 end"


def console_for_output() -> Console:
    """A console that does not squeeze tables to 80 columns when the output is a pipe or a file."""
    return Console() if sys.stdout.isatty() else Console(width=150)


def print_report(db: Path, run_id: str, *, gamma: float = 1.0, console: Console | None = None) -> None:
    """The run's score table: per iteration (for a single task), per task, then the run's totals."""
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
    digest = load_digest(db, run_id, gamma=gamma)
    if len(digest.tasks) == 1 and digest.tasks[0].iterations:
        task = digest.tasks[0]
        table = Table(title=f"{task.task_id}: per iteration", title_justify="left")
        for col in ("iteration", "architect", "programmer", "status", "passing", "a(c)", "regressions", "fixes"):
            table.add_column(col, justify="right" if col in ("iteration", "passing", "a(c)") else "left")
        for it in task.iterations:
            table.add_row(str(it.iteration), fmt(it.architect_status), fmt(it.programmer_status), escape(it.status),
                          f"{it.n_passed}/{it.n_target}", fmt(it.a), fmt(it.regressions), fmt(it.fixes))
        console.print(table)
    table = Table(title=f"run {run_id} — EvoScore γ = {gamma:g}", title_justify="left")
    for col in ("task", "status", "base → target", "turns", "solved", "EvoScore", "zero-regression", "regressed tests", "note"):
        table.add_column(col)
    for t in digest.tasks:
        table.add_row(escape(t.task_id), escape(t.status), f"{fmt(t.n_base)} → {fmt(t.n_target)}", fmt(t.turns), fmt(t.solved),
                      fmt(t.evoscore), fmt(t.zero_regression), fmt(t.regressed_tests), escape(t.reason or ""))
    console.print(table)
    if digest.integrity:
        events = Table(title="integrity: what the harness undid or flagged (`integrity_events`)", title_justify="left")
        for col in ("task", "iteration", "event", "detail"):
            events.add_column(col)
        for e in digest.integrity:
            detail = "; ".join([*e.integrity_flags[:3], *(f"overridden: {p}" for p in e.tampered_files[:5]),
                                *(f"discarded: {p}" for p in e.discarded_files[:3])])
            events.add_row(escape(e.task_id), str(e.iteration), e.event, escape(detail))
        console.print(events)
    console.print(f"sandbox: {digest.sandbox()}", style="dim")
    console.print(
        f"[bold]run[/]: {digest.n_scored}/{digest.n_tasks} tasks scored · EvoScore {fmt(digest.evoscore)} · "
        f"zero-regression rate {fmt(digest.zero_regression_rate)} · solved rate {fmt(digest.solved_rate)} · "
        f"avg turns {fmt(digest.avg_turns, 1)} · cost {money(digest.cost_usd)} "
        f"({digest.input_tokens} in / {digest.output_tokens} out tokens)"
    )
    print_agent_outcomes(db, run_id, console)
    print_completeness(db, run_id, console)
    console.print(f"query these numbers: {sql_hint(db, f'select * from evoscore(gamma := {gamma:g}) where run_id = {run_id!r}')}",
                  style="dim", soft_wrap=True)


def print_agent_outcomes(db: Path, run_id: str, console: Console) -> None:
    """List every agent attempt that did not end ok (`trajectories`): who, when, how and why."""
    with connect(db, read_only=True) as con:
        rows = con.execute(f"select task_id, iteration, role, status, message from trajectories "
                           f"where run_id = ? and status <> 'ok' order by task_id, iteration, {ROLE_ORDER}",
                           [run_id]).fetchall()
    if not rows:
        return
    table = Table(title="agent outcomes that were not ok (`trajectories`)", title_justify="left")
    for col in ("task", "iteration", "role", "status", "message"):
        table.add_column(col)
    for task_id, iteration, role, status, message in rows:
        table.add_row(escape(task_id), str(iteration), role, status, escape((message or "")[:200]))
    console.print(table)


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
