"""A SWE-Bench-CL run's results for people: ``evoci report`` and the flow run's artifact in the Prefect UI.

Every number is read from ``cl_matrix``, ``cl_metrics_default`` and ``cl_experiences``; this
module only formats. A cell that was not evaluated prints as ``·`` (NULL), never 0.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from evoci.digest import fmt
from evoci.store import connect, reading

METRICS = ("acc", "forgetting", "ft", "bwt", "aulc", "tue", "cl_p", "cl_s", "cl_f1", "cl_fbeta", "cl_score",
           "cells_missing")


@dataclass
class CLSummary:
    """Per sequence: the matrix as rows of text (row i = memory stage), and the metrics; the memory's size."""

    run_id: str
    matrices: dict[str, list[list[str]]] = field(default_factory=dict)
    metrics: list[list[str]] = field(default_factory=list)
    memory: list[str] = field(default_factory=list)


def is_cl_run(db: Path, run_id: str) -> bool:
    with connect(db, read_only=True) as con:
        row = con.execute("select protocol from runs where run_id = ?", [run_id]).fetchone()
    return bool(row) and row[0] == "swe-bench-cl"


def load_summary(con, run_id: str) -> CLSummary:
    summary = CLSummary(run_id)
    cells = con.execute("select sequence_id, n_tasks, memory_stage, sequence_position, a from cl_matrix "
                        "where run_id = ? order by all", [run_id]).fetchall()
    for sequence_id, n, i, j, a in cells:
        rows = summary.matrices.setdefault(sequence_id, [[str(k)] + ["·"] * n for k in range(n + 1)])
        rows[i][j] = "·" if a is None else f"{a:.2f}"
    for row in con.execute(f"select sequence_id, {', '.join(METRICS)} from cl_metrics_default where run_id = ? "
                           "order by sequence_id", [run_id]).fetchall():
        summary.metrics.append([row[0], *(fmt(v) for v in row[1:])])
    for sequence_id, stored, resolved in con.execute(
            """select sequence_id, count(*), count(*) filter (where outcome = 'resolved') from cl_experiences
               where run_id = ? group by all order by all""", [run_id]).fetchall():
        summary.memory.append(f"memory of {sequence_id}: {stored} experience(s) stored, {resolved} of them resolved")
    return summary


def print_cl_report(db: Path, run_id: str, console: Console) -> None:
    with connect(db, read_only=True) as con:
        summary = load_summary(con, run_id)
    for sequence_id, rows in summary.matrices.items():
        table = Table(title=f"{sequence_id}: a(i, j); i = memory stage (0 = off), j = issue", title_justify="left")
        for col in _matrix_header(rows):
            table.add_column(col, justify="right")
        for row in rows:
            table.add_row(*(escape(str(cell)) for cell in row))
        console.print(table)
    table = Table(title=f"run {run_id} — SWE-Bench-CL metrics (cl_metrics_default)", title_justify="left")
    for col in ("sequence", *METRICS):
        table.add_column(col, justify="left" if col == "sequence" else "right")
    for row in summary.metrics:
        table.add_row(*(escape(str(cell)) for cell in row))  # ids are text, never markup
    console.print(table)
    for line in summary.memory:
        console.print(f"{escape(line)} (cl_experiences)", style="dim")


def publish_cl(db: Path, run_id: str) -> None:
    """The run's matrices and metrics as a markdown artifact on its flow run page; never raises."""
    try:
        from prefect.artifacts import create_markdown_artifact

        from evoci.artifacts import _table, artifact_key

        with reading(db) as con:
            summary = load_summary(con, run_id)
        parts = [f"# SWE-Bench-CL run `{run_id}`"]
        for sequence_id, rows in summary.matrices.items():
            parts += [f"## {sequence_id}: a(i, j), i = memory stage (0 = memory off), j = issue",
                      _table(_matrix_header(rows), rows)]
        parts += ["## Metrics (`cl_metrics_default`)", _table(["sequence", *METRICS], summary.metrics), *summary.memory,
                  f"`evoci sql \"select * from cl_metrics_default where run_id = '{run_id}'\"`"]
        create_markdown_artifact("\n\n".join(parts), key=artifact_key("swe-bench-cl", run_id),
                                 description=f"SWE-Bench-CL run {run_id}")
    except Exception as exc:  # an artifact is a view of the facts: never fail the run for it
        logging.getLogger("evoci.artifacts").warning("could not publish the SWE-Bench-CL artifact of %s: %s", run_id, exc)


def _matrix_header(rows: list[list[str]]) -> list[str]:
    return ["i", *(str(j) for j in range(1, len(rows[0])))]
