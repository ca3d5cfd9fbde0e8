"""The quality node: static code quality of one codebase (``evoci.swe_ci.quality``), and its facts.

It measures the harness's own copy of a commit — extracted from the workspace's git for the
base and each iteration, the harness's oracle checkout for the oracle — never the work tree the
agent left, and runs none of the codebase's code. A tool that fails on the agent's code is a
recorded measurement (``error``), not an infrastructure fault.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from prefect import task

from evoci import treefs
from evoci.logs import run_logger
from evoci.runtime import Prepared, RunContext
from evoci.swe_ci.quality import Quality, measure
from evoci.tasks.caching import quality_key
from evoci.tasks.retry import NODE_OPTIONS
from evoci.workspace import Workspace, extract_tree

ORACLE_ITERATION = -1  # how code_quality keys the oracle c*


@task(name="quality", task_run_name="quality-{iteration}", cache_key_fn=quality_key, **NODE_OPTIONS)
def quality_task(prepared: Prepared, run: RunContext, iteration: int, sha: str) -> Quality:
    """Measure commit ``sha`` (iteration 0 = base, -1 = the oracle) against the base's source."""
    spec = prepared.task
    scratch = run.paths.task_dir(run.run_id, spec.task_id) / "quality" / str(iteration)
    treefs.clear(scratch)  # trees of an agent's commits, at any depth
    try:
        workspace = Workspace(Path(prepared.workspace)).repo
        extract_tree(workspace, prepared.start_sha, scratch / "base")
        if iteration == ORACLE_ITERATION:
            tree = Path(prepared.oracle_dir)  # the harness's checkout of c*, which no agent reaches
        else:
            tree = scratch / "tree"
            extract_tree(workspace, sha, tree)
        quality = measure(tree, scratch / "base", spec.tests_dir)
    finally:
        treefs.clear(scratch)
    run_logger().info(
        "task %s, %s: MI %s, mean complexity %s, pylint %s, %d line(s) changed against the base%s",
        spec.task_id, _name(iteration), _fmt(quality.mi), _fmt(quality.cc_mean), _fmt(quality.pylint_score),
        quality.lines_added + quality.lines_deleted, f" ({quality.error})" if quality.error else "",
    )
    return quality


def record(run: RunContext, task_id: str, measurements: list[tuple[int, str, Any]]) -> None:
    """Write the ``code_quality`` rows of (iteration, commit, quality node future or result).

    Through the store's batch writer: a results file held by another process costs a spooled
    batch, written by the next write, never a lost row or a failed task.
    """
    run.facts.write_batch([
        statement(run.run_id, task_id, iteration, sha, quality.result() if hasattr(quality, "result") else quality)
        for iteration, sha, quality in measurements
    ])


def insert(con, run_id: str, task_id: str, iteration: int, sha: str | None, q: Quality) -> None:
    """Write one ``code_quality`` row (a no-op when it exists)."""
    con.execute(*statement(run_id, task_id, iteration, sha, q))


def statement(run_id: str, task_id: str, iteration: int, sha: str | None, q: Quality) -> tuple[str, list]:
    """The insert of one ``code_quality`` row, as (sql, parameters)."""
    codebase = "oracle" if iteration == ORACLE_ITERATION else "base" if iteration == 0 else "agent"
    row = asdict(q)
    row["pylint_messages"] = json.dumps(q.pylint_messages, sort_keys=True)
    columns = ["run_id", "task_id", "iteration", "codebase", "codebase_sha", *row]
    return (f"insert into code_quality ({', '.join(columns)}) values ({', '.join('?' * len(columns))}) "
            "on conflict do nothing", [run_id, task_id, iteration, codebase, sha, *row.values()])


def _name(iteration: int) -> str:
    return "the oracle" if iteration == ORACLE_ITERATION else "the base" if iteration == 0 else f"iteration {iteration}"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
