"""Concise fact rows for SWE-CI view tests.

Test ids are single letters: ``add_task(con, "r1", "t1", targets="abcd", passed=["a", "ab"])``
makes T = {a, b, c, d}, records iteration 0 with only ``a`` passing and iteration 1 with
``a`` and ``b`` passing; every other target test gets ``failed`` (``missing`` in an
``agent_error`` iteration). ``None`` in ``passed`` leaves that iteration without any row, as an
infrastructure failure does.
"""

from __future__ import annotations

from datetime import datetime

import duckdb

NOW = datetime(2025, 1, 1)


def add_run(
    con: duckdb.DuckDBPyConnection,
    run_id: str = "r1",
    *,
    max_iterations: int | None = 3,
    protocol: str = "swe-ci",
) -> None:
    """One `runs` row."""
    con.execute(
        "insert into runs (run_id, protocol, dataset, max_iterations, config_hash, config, created_at) "
        "values (?, ?, 'test', ?, 'hash', '{}', ?)",
        [run_id, protocol, max_iterations, NOW],
    )


def add_task(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    task_id: str,
    *,
    targets: str,
    passed: list[str | None],
    status: str = "done",
    statuses: dict[int, str] | None = None,
    protocol: str = "swe-ci",
) -> None:
    """A task with its target set and, per iteration i, the test ids that passed at i.

    ``statuses`` maps an iteration to its test-run status (default ``ok``). Letters in
    ``passed`` that are not in ``targets`` are recorded as passing tests outside T.
    """
    statuses = statuses or {}
    con.execute(
        "insert into tasks (run_id, task_id, protocol, status, updated_at) values (?, ?, ?, ?, ?)",
        [run_id, task_id, protocol, status, NOW],
    )
    for test in targets:
        con.execute("insert into targets values (?, ?, ?, 'target')", [run_id, task_id, test])
    for iteration, passing in enumerate(passed):
        if passing is None:
            continue
        status_i = statuses.get(iteration, "ok")
        add_iteration(con, run_id, task_id, iteration, status=status_i)
        not_passed = "missing" if status_i == "agent_error" else "failed"
        outcomes = {test: not_passed for test in targets} | {test: "passed" for test in passing}
        add_results(con, run_id, task_id, iteration, outcomes)


def add_iteration(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    task_id: str,
    iteration: int,
    *,
    status: str = "ok",
    attempt: int = 0,
) -> None:
    """One `iterations` row."""
    con.execute(
        "insert into iterations (run_id, task_id, iteration, attempt, status) values (?, ?, ?, ?, ?)",
        [run_id, task_id, iteration, attempt, status],
    )


def add_results(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    task_id: str,
    iteration: int,
    outcomes: dict[str, str],
    *,
    attempt: int = 0,
) -> None:
    """`test_results` rows: test id → outcome."""
    for test, outcome in outcomes.items():
        con.execute(
            "insert into test_results values (?, ?, ?, ?, ?, ?)",
            [run_id, task_id, iteration, attempt, test, outcome],
        )


def rows(con: duckdb.DuckDBPyConnection, query: str) -> list[dict]:
    """The query's rows as dicts (column → value), in the query's order."""
    result = con.execute(query)
    columns = [d[0] for d in result.description]
    return [dict(zip(columns, row)) for row in result.fetchall()]
