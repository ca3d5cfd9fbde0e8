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
from rich.table import Table

from evoci.digest import fmt
from evoci.settings import Paths
from evoci.store import connect

TASK_SCORES = """
select t.task_id, t.task_status as status, t.n_base, t.n_target, t.turns, t.solved,
       e.evoscore, z.zero_regression, z.regressed_tests, coalesce(t.reason, e.reason) as reason
from swe_ci_tasks t
join evoscore(gamma := $gamma) e using (run_id, task_id)
join swe_ci_zero_regression z using (run_id, task_id)
where t.run_id = $run_id
order by t.task_id
"""

RUN_SCORES = """
select e.n_tasks, e.n_scored, e.evoscore, z.zero_regression_rate, s.solved_rate, s.avg_turns,
       c.cost_usd, c.input_tokens, c.output_tokens
from evoscore_runs(gamma := $gamma) e
join swe_ci_zero_regression_runs z using (run_id)
join swe_ci_solved_runs s using (run_id)
left join cost_by_run c using (run_id)
where e.run_id = $run_id
"""

ITERATIONS = """
select task_id, iteration, status, n_passed, n_target, a, regressions, fixes
from swe_ci_iterations where run_id = $run_id order by task_id, iteration
"""


def console_for_output() -> Console:
    """A console that does not squeeze tables to 80 columns when the output is a pipe or a file."""
    return Console() if sys.stdout.isatty() else Console(width=150)


def print_report(db: Path, run_id: str, *, gamma: float = 1.0, console: Console | None = None) -> None:
    """The run's score table: per task, then the run's totals."""
    console = console or console_for_output()
    with connect(db, read_only=True) as con:
        params = {"run_id": run_id, "gamma": gamma}
        tasks = con.execute(TASK_SCORES, params).fetchall()
        totals = con.execute(RUN_SCORES, params).fetchone()
        iterations = con.execute(ITERATIONS, {"run_id": run_id}).fetchall()
    if len(tasks) == 1 and iterations:
        table = Table(title=f"{tasks[0][0]}: per iteration", title_justify="left")
        for col in ("iteration", "status", "passing", "a(c)", "regressions", "fixes"):
            table.add_column(col, justify="right" if col != "status" else "left")
        for _, it, status, n, total, a, reg, fix in iterations:
            table.add_row(str(it), status, f"{n}/{total}", fmt(a), fmt(reg), fmt(fix))
        console.print(table)
    table = Table(title=f"run {run_id} — EvoScore γ = {gamma:g}", title_justify="left")
    for col in ("task", "status", "base → target", "turns", "solved", "EvoScore", "zero-regression", "regressed tests", "note"):
        table.add_column(col)
    for task_id, status, n_base, n_target, turns, solved, evoscore, zero_reg, regressed, reason in tasks:
        table.add_row(task_id, status, f"{fmt(n_base)} → {fmt(n_target)}", fmt(turns), fmt(solved),
                      fmt(evoscore), fmt(zero_reg), fmt(regressed), reason or "")
    console.print(table)
    if totals:
        n_tasks, n_scored, evoscore, zero_rate, solved_rate, turns, cost, tokens_in, tokens_out = totals
        console.print(
            f"[bold]run[/]: {n_scored}/{n_tasks} tasks scored · EvoScore {fmt(evoscore)} · "
            f"zero-regression rate {fmt(zero_rate)} · solved rate {fmt(solved_rate)} · "
            f"avg turns {fmt(turns, 1)} · cost ${fmt(cost or 0.0, 4)} ({tokens_in or 0} in / {tokens_out or 0} out tokens)"
        )
    console.print(f"query these numbers: evoci sql \"select * from evoscore(gamma := {gamma:g}) where run_id = '{run_id}'\"",
                  style="dim")


def run_sql(db: Path | None, query: str, *, output: str = "table") -> int:
    """Run one read-only query and print its rows."""
    import duckdb

    db = db.absolute() if db else Paths.default().db
    with connect(db, read_only=True) as con:
        try:
            cursor = con.execute(query)
        except duckdb.Error as exc:
            print(f"evoci: query failed: {exc}", file=sys.stderr)
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


def print_trajectory(db: Path, run_id: str, task_id: str, iteration: int, *, role: str | None = None) -> int:
    """Each agent's outcome, model calls and messages in one iteration."""
    console = console_for_output()
    with connect(db, read_only=True) as con:
        rows = con.execute(
            """select role, status, message, seconds, trajectory from trajectories
               where run_id = ? and task_id = ? and iteration = ? and (? is null or role = ?) order by role desc""",
            [run_id, task_id, iteration, role, role],
        ).fetchall()
        calls = con.execute(
            """select role, call_index, model, input_tokens, output_tokens, cached_tokens, cost_usd, latency_s,
                      finish_reason, error from agent_calls
               where run_id = ? and task_id = ? and iteration = ? order by role desc, call_index""",
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
