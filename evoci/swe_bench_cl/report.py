"""A SWE-Bench-CL run's results for people: ``evoci report`` prints the matrix and the metrics.

Every number is read from ``cl_matrix`` and ``cl_metrics_default`` (one row per sequence);
this module only formats. A cell that was not evaluated prints as ``·`` (NULL), never 0.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from evoci.digest import fmt
from evoci.store import connect

METRICS = ("acc", "forgetting", "ft", "bwt", "aulc", "tue", "cl_p", "cl_s", "cl_f1", "cl_fbeta", "cl_score",
           "cells_missing")


def is_cl_run(db: Path, run_id: str) -> bool:
    with connect(db, read_only=True) as con:
        row = con.execute("select protocol from runs where run_id = ?", [run_id]).fetchone()
    return bool(row) and row[0] == "swe-bench-cl"


def print_cl_report(db: Path, run_id: str, console: Console) -> None:
    with connect(db, read_only=True) as con:
        cells = con.execute("""select sequence_id, memory_stage, sequence_position, a from cl_matrix
                               where run_id = ? order by all""", [run_id]).fetchall()
        metrics = con.execute(f"select sequence_id, {', '.join(METRICS)} from cl_metrics_default where run_id = ? "
                              "order by sequence_id", [run_id]).fetchall()
        memory = con.execute("""select sequence_id, count(*), count(*) filter (where outcome = 'resolved')
                                from cl_experiences where run_id = ? group by all order by all""", [run_id]).fetchall()
    for sequence_id in dict.fromkeys(c[0] for c in cells):
        grid = [c for c in cells if c[0] == sequence_id]
        n = max(c[2] for c in grid)
        table = Table(title=f"{sequence_id}: a(i, j); i = memory stage (0 = off), j = issue",
                      title_justify="left")
        table.add_column("i")
        for j in range(1, n + 1):
            table.add_column(str(j), justify="right")
        for i in range(n + 1):
            row = {c[2]: c[3] for c in grid if c[1] == i}
            table.add_row(str(i), *("·" if row.get(j) is None else f"{row[j]:.2f}" for j in range(1, n + 1)))
        console.print(table)
    table = Table(title=f"run {run_id} — SWE-Bench-CL metrics (cl_metrics_default)", title_justify="left")
    for col in ("sequence", *METRICS):
        table.add_column(col, justify="left" if col == "sequence" else "right")
    for row in metrics:
        table.add_row(row[0], *(fmt(v) for v in row[1:]))
    console.print(table)
    for sequence_id, stored, resolved in memory:
        console.print(f"memory of {sequence_id}: {stored} experience(s) stored, {resolved} of them resolved "
                      "(cl_experiences)", style="dim")
