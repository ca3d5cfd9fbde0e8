"""Prefect artifacts of a run: what the run's page in the UI shows besides its graph and logs.

- each ``evolve`` flow run (one task): a markdown summary with the task's a(c) plot, the
  per-iteration table, and the plot as an image artifact;
- each ``benchmark`` flow run: a markdown summary (scores, solved, regressions, cost, one
  row per task, the plots), the task table, and the plots as image artifacts — a(c) per
  iteration per task and, when other runs of the same dataset exist, their EvoScore
  ranking across γ.

Plots are inline ``data:image/png;base64`` URLs: they render offline, with no file server.
Numbers come from the SQL views through ``evoci.digest``. Creating artifacts never fails
a run: a problem is logged as a warning and the run goes on.
"""

from __future__ import annotations

import logging
import re

from evoci.digest import RunDigest, TaskDigest, fmt, load_digest, money, percent, sql_hint
from evoci.runtime import RunContext
from evoci.swe_ci.plots import a_per_iteration, data_url, run_plots


def _logger():
    from prefect.exceptions import MissingContextError
    from prefect.logging import get_run_logger

    try:
        return get_run_logger()
    except MissingContextError:
        return logging.getLogger("evoci.artifacts")


def artifact_key(*parts: str) -> str:
    """A Prefect artifact key (lowercase letters, digits and dashes) from names."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", "-".join(("evoci", *parts)).lower())).strip("-")


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


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
