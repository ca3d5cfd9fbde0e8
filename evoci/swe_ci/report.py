"""A SWE-CI run's results for people: ``evoci report`` and the flow runs' artifacts in the Prefect UI.

- ``evoci report``: per iteration (for a single task), per task, the integrity events, the
  run's totals, the agent attempts that did not end ok;
- each ``evolve`` flow run (one task): a markdown summary with the task's a(c) plot, the
  per-iteration table, and the plot as an image artifact;
- each ``benchmark`` flow run: a markdown summary (scores, solved, regressions, cost, one
  row per task, the plots), the task table, and the plots as image artifacts — a(c) per
  iteration per task and, when other runs of the same dataset exist, their EvoScore
  ranking across γ.

Plots are inline ``data:image/png;base64`` URLs: they render offline, with no file server.
Numbers come from the SQL views through ``evoci.swe_ci.digest``; this module only formats.
Creating artifacts never fails a run: a problem is logged as a warning and the run goes on.
"""

from __future__ import annotations

import logging
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from evoci.artifacts import _table, artifact_key
from evoci.digest import fmt, money, sql_hint
from evoci.report import ROLE_ORDER, print_completeness
from evoci.runtime import RunContext
from evoci.store import connect
from evoci.swe_ci.digest import RunDigest, TaskDigest, load_digest
from evoci.swe_ci.plots import a_per_iteration, data_url, run_plots


def print_swe_ci_report(db: Path, run_id: str, *, gamma: float, console: Console) -> None:
    """The run's score table: per iteration (for a single task), per task, then the run's totals,
    the agent attempts that did not end ok and the dataset's completeness (``print_completeness``)."""
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


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f} %"


def _logger():
    from prefect.exceptions import MissingContextError
    from prefect.logging import get_run_logger

    try:
        return get_run_logger()
    except MissingContextError:
        return logging.getLogger("evoci.artifacts")


def task_outcome(task: TaskDigest) -> str:
    if task.evoscore is None:
        return f"not scored: {task.reason or task.status}"
    solved = f"solved at iteration {task.turns}" if task.solved else f"not solved after {task.turns} iterations"
    regressed = task.regressed_tests or 0
    return (f"EvoScore **{fmt(task.evoscore)}** (γ = 1) · {solved} · "
            f"{regressed} regressed test{'s' if regressed != 1 else ''} · cost {money(task.cost_usd)}")


def iteration_rows(task: TaskDigest) -> list[dict[str, object]]:
    """The per-iteration table of one task (a table artifact, and the HTML report's)."""
    return [
        {"iteration": it.iteration, "status": it.status, "passing": f"{it.n_passed}/{it.n_target}",
         "a(c)": fmt(it.a), "regressions": fmt(it.regressions), "fixes": fmt(it.fixes)}
        for it in task.iterations
    ]


def task_rows(digest: RunDigest) -> list[dict[str, object]]:
    """One row per task of the run (a table artifact, the summary's table, the HTML report's)."""
    return [
        {"task": t.task_id, "status": t.status, "base → target": f"{fmt(t.n_base)} → {t.n_target}",
         "turns": fmt(t.turns), "solved": fmt(t.solved), "EvoScore γ=1": fmt(t.evoscore),
         "zero-regression": fmt(t.zero_regression), "regressed tests": fmt(t.regressed_tests),
         "cost $": fmt(t.cost_usd or 0.0, 4), "note": t.reason or ""}
        for t in digest.tasks
    ]


def headline(digest: RunDigest) -> str:
    """The run's scores in one line."""
    return (f"{digest.n_scored} of {digest.n_tasks} task(s) scored · EvoScore **{fmt(digest.evoscore)}** (γ = 1) · "
            f"solved {digest.n_solved} ({percent(digest.solved_rate)}) · zero-regression rate "
            f"{percent(digest.zero_regression_rate)} · avg turns {fmt(digest.avg_turns, 1)} · "
            f"cost {money(digest.cost_usd)} ({digest.input_tokens} in / {digest.output_tokens} out tokens, "
            f"{digest.calls} agent calls)")


def run_markdown(digest: RunDigest, plots: dict[str, bytes]) -> str:
    rows = task_rows(digest)
    parts = [
        f"# evoci run `{digest.run_id}`",
        headline(digest),
        _table(["", ""], [["dataset", digest.dataset or "—"], ["agents", digest.agents()],
                          ["sandbox", digest.sandbox()], ["max iterations N", fmt(digest.max_iterations)]]),
        "## Tasks",
        _table(list(rows[0]), [list(r.values()) for r in rows]) if rows else "_no task recorded_",
    ]
    if "a" in plots:
        parts += ["## a(c) per iteration", f"![a(c) per iteration]({data_url(plots['a'])})"]
    if "ranking" in plots:
        gammas = sorted({p.gamma for p in digest.ranking})
        by_run = {run: {p.gamma: p for p in digest.ranking if p.run_id == run} for run in digest.compared_runs}
        parts += [
            f"## EvoScore ranking across γ ({len(by_run)} runs of dataset `{digest.dataset}`)",
            _table(["run"] + [f"γ={g:g}" for g in gammas],
                   [[run + (" ← this run" if run == digest.run_id else "")]
                    + [f"#{s[g].rank} ({fmt(s[g].evoscore)})" if g in s else "—" for g in gammas]
                    for run, s in by_run.items()]),
            f"![EvoScore ranking across γ]({data_url(plots['ranking'])})",
        ]
    parts.append(f"Query these numbers: `{sql_hint(digest.db, f'select * from evoscore(gamma := 1.0) where run_id = {digest.run_id!r}')}`")
    return "\n\n".join(parts) + "\n"


def task_markdown(digest: RunDigest, task: TaskDigest, plot: bytes) -> str:
    rows = iteration_rows(task)
    return "\n\n".join([
        f"# Task `{task.task_id}` — run `{digest.run_id}`",
        task_outcome(task),
        f"base → target: {fmt(task.n_base)} → {task.n_target} target tests · zero-regression: "
        f"{fmt(task.zero_regression)} · status: {task.status}",
        f"![a(c) per iteration]({data_url(plot)})",
        "## Iterations",
        _table(list(rows[0]), [list(r.values()) for r in rows]) if rows else "_no iteration recorded_",
    ]) + "\n"


def publish_task(run: RunContext, task_id: str) -> None:
    """Artifacts of one task's evolve flow run. Never raises."""
    from prefect.artifacts import create_image_artifact, create_markdown_artifact, create_table_artifact

    try:
        digest = load_digest(run.db, run.run_id, task_id=task_id)
        if not digest.tasks:
            return
        task = digest.tasks[0]  # a(c) is SWE-CI's: other protocols' tasks are not in the views read here
        plot = a_per_iteration([task], digest.max_iterations, title=f"a(c) per iteration — {task_id}")
        create_markdown_artifact(task_markdown(digest, task, plot), key=artifact_key(run.run_id, task_id, "summary"),
                                 description=f"Task {task_id}: {task_outcome(task).replace('**', '')}")
        create_table_artifact(iteration_rows(task), key=artifact_key(run.run_id, task_id, "iterations"),
                              description=f"Task {task_id}: passing target tests, a(c), regressions per iteration")
        create_image_artifact(data_url(plot), key=artifact_key(run.run_id, task_id, "a-plot"),
                              description=f"Task {task_id}: a(c) per iteration")
    except Exception as exc:  # an artifact is a view of the results; it must never fail the run
        _logger().warning("could not create the artifacts of task %s (the results are unaffected): %s", task_id, exc)


def publish_run(run: RunContext) -> None:
    """Artifacts of a benchmark flow run. Never raises."""
    from prefect.artifacts import create_image_artifact, create_markdown_artifact, create_table_artifact

    try:
        digest = load_digest(run.db, run.run_id)
        plots = run_plots(digest)
        summary = headline(digest).replace("**", "")
        create_markdown_artifact(run_markdown(digest, plots), key=artifact_key(run.run_id, "summary"),
                                 description=f"Run {run.run_id}: {summary}")
        if digest.tasks:
            create_table_artifact(task_rows(digest), key=artifact_key(run.run_id, "tasks"),
                                  description=f"Run {run.run_id}: one row per task")
        if "a" in plots:
            create_image_artifact(data_url(plots["a"]), key=artifact_key(run.run_id, "a-plot"),
                                  description=f"Run {run.run_id}: a(c) per iteration per task")
        if "ranking" in plots:
            create_image_artifact(data_url(plots["ranking"]), key=artifact_key(run.run_id, "gamma-ranking"),
                                  description=f"EvoScore ranking across γ of {len(digest.compared_runs)} runs of {digest.dataset}")
        _logger().info("run %s: %s", run.run_id, summary)
    except Exception as exc:  # an artifact is a view of the results; it must never fail the run
        _logger().warning("could not create the run's artifacts (the results are unaffected): %s", exc)
