"""Row-insertion helpers for the SWE-EVO, SWE-Bench-CL and NITR view tests.

Each helper writes the base-table facts one protocol produces, with every column a view does
not read filled with a fixed placeholder, so a test states only what its arithmetic needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import duckdb

PASSED = "passed"
FAILED = "failed"


def add_run(con: duckdb.DuckDBPyConnection, run_id: str, protocol: str) -> None:
    con.execute(
        "insert into runs (run_id, protocol, config_hash, config, created_at) "
        "values (?, ?, 'hash', '{}', timestamp '2026-01-01')",
        [run_id, protocol],
    )


def add_task(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    task_id: str,
    protocol: str,
    *,
    status: str = "done",
    sequence_id: str | None = None,
    sequence_position: int | None = None,
    dimension: str | None = None,
    granularity: str | None = None,
) -> None:
    con.execute(
        "insert into tasks (run_id, task_id, protocol, repo, sequence_id, sequence_position, "
        "dimension, granularity, status, updated_at) "
        "values (?, ?, ?, 'repo', ?, ?, ?, ?, ?, timestamp '2026-01-01')",
        [run_id, task_id, protocol, sequence_id, sequence_position, dimension, granularity, status],
    )


def add_targets(
    con: duckdb.DuckDBPyConnection, run_id: str, task_id: str, role: str, test_ids: Iterable[str]
) -> None:
    for test_id in test_ids:
        con.execute("insert into targets values (?, ?, ?, ?)", [run_id, task_id, test_id, role])


def add_iteration(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    task_id: str,
    iteration: int,
    *,
    attempt: int = 0,
    status: str = "ok",
    patch_applied: bool | None = None,
    wall_s: float | None = None,
) -> None:
    con.execute(
        "insert into iterations (run_id, task_id, iteration, attempt, status, patch_applied, wall_s) "
        "values (?, ?, ?, ?, ?, ?, ?)",
        [run_id, task_id, iteration, attempt, status, patch_applied, wall_s],
    )


def add_results(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    task_id: str,
    iteration: int,
    outcomes: Mapping[str, str],
    *,
    attempt: int = 0,
) -> None:
    for test_id, outcome in outcomes.items():
        con.execute(
            "insert into test_results values (?, ?, ?, ?, ?, ?)",
            [run_id, task_id, iteration, attempt, test_id, outcome],
        )


# --- SWE-EVO ------------------------------------------------------------------------------


def swe_evo_instance(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    task_id: str,
    *,
    f2p: Mapping[str, str],
    p2p: Mapping[str, str] | None = None,
    prediction: str | None = "ok",
    patch_applied: bool | None = True,
    status: str = "done",
) -> None:
    """One instance: targets from the keys of f2p/p2p, outcomes from their values.

    ``prediction`` is the iteration-1 status; None writes no iteration-1 row (and no results).
    An outcome of None leaves that test without a result row.
    """
    p2p = p2p or {}
    add_task(con, run_id, task_id, "swe-evo", status=status)
    add_targets(con, run_id, task_id, "F2P", f2p)
    add_targets(con, run_id, task_id, "P2P", p2p)
    if prediction is None:
        return
    add_iteration(con, run_id, task_id, 1, status=prediction, patch_applied=patch_applied)
    reported = {t: o for t, o in {**f2p, **p2p}.items() if o is not None}
    add_results(con, run_id, task_id, 1, reported)


# --- SWE-Bench-CL -------------------------------------------------------------------------


def cl_issue(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    sequence_id: str,
    position: int,
    *,
    status: str = "done",
    f2p: int = 1,
    p2p: int = 1,
) -> str:
    """One issue at 1-based ``position`` with ``f2p`` F2P and ``p2p`` P2P targets; returns its id."""
    task_id = f"{sequence_id}-{position}"
    add_task(con, run_id, task_id, "swe-bench-cl", status=status, sequence_id=sequence_id, sequence_position=position)
    add_targets(con, run_id, task_id, "F2P", [f"{task_id}::f2p{k}" for k in range(f2p)])
    add_targets(con, run_id, task_id, "P2P", [f"{task_id}::p2p{k}" for k in range(p2p)])
    return task_id


def cl_attempt(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    task_id: str,
    stage: int,
    resolved: bool,
    *,
    attempt: int = 0,
    wall_s: float | None = None,
) -> None:
    """Issue ``task_id`` attempted with memory M(stage): every target passes, or its F2P fail."""
    add_iteration(con, run_id, task_id, stage, attempt=attempt, wall_s=wall_s)
    roles = con.execute("select test_id, role from targets where run_id = ? and task_id = ?", [run_id, task_id])
    outcomes = {t: PASSED if resolved or role == "P2P" else FAILED for t, role in roles.fetchall()}
    add_results(con, run_id, task_id, stage, outcomes, attempt=attempt)


def cl_matrix_rows(
    con: duckdb.DuckDBPyConnection, run_id: str, sequence_id: str, matrix: Mapping[tuple[int, int], float]
) -> None:
    """Write the entries a(i, j) of a matrix keyed (i, j), as attempts at stage i on issue j.

    1 → one resolved attempt; 0 → one failed attempt; 0.5 → one resolved + one failed attempt.
    """
    for (stage, position), value in matrix.items():
        task_id = f"{sequence_id}-{position}"
        if value == 0.5:
            cl_attempt(con, run_id, task_id, stage, True, attempt=0)
            cl_attempt(con, run_id, task_id, stage, False, attempt=1)
        else:
            cl_attempt(con, run_id, task_id, stage, bool(value))


# --- NITR ---------------------------------------------------------------------------------


def nitr_probe(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    task_id: str,
    *,
    dimension: str = "D1",
    granularity: str = "micro",
    functional: bool | None = True,
    structural: bool | None = True,
    build_error: bool = False,
    steps: int = 1,
    status: str = "done",
) -> None:
    """A probe with two functional and one structural target, judged at step ``steps``.

    Earlier steps (1..steps−1) are written with every target failing, so only the final step
    can make the probe pass. ``functional`` / ``structural`` None writes no target of that role.
    """
    add_task(con, run_id, task_id, "nitr", status=status, dimension=dimension, granularity=granularity)
    functional_ids = [f"{task_id}::func_a", f"{task_id}::func_b"] if functional is not None else []
    structural_ids = [f"{task_id}::oracle"] if structural is not None else []
    add_targets(con, run_id, task_id, "functional", functional_ids)
    add_targets(con, run_id, task_id, "structural", structural_ids)
    for step in range(1, steps):
        add_iteration(con, run_id, task_id, step)
        add_results(con, run_id, task_id, step, {t: FAILED for t in functional_ids + structural_ids})
    if steps < 1:
        return
    add_iteration(con, run_id, task_id, steps, status="build_error" if build_error else "ok")
    if build_error:
        return
    outcomes = {t: PASSED for t in functional_ids[:1]}
    outcomes |= {functional_ids[1]: PASSED if functional else FAILED} if functional_ids else {}
    outcomes |= {t: PASSED if structural else FAILED for t in structural_ids}
    add_results(con, run_id, task_id, steps, outcomes)
