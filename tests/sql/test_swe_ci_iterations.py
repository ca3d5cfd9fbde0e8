"""swe_ci_iterations: normalized change a(c_i), regressions and fixes per iteration."""

from __future__ import annotations

import duckdb
import pytest
from pytest import approx

from .swe_ci_rows import add_iteration, add_results, add_run, add_task, rows

COLUMNS = "iteration, status, n_target, n_base, n_passed, a, regressions, fixes, valid"


def iterations(con, task_id: str) -> list[dict]:
    return rows(con, f"select {COLUMNS} from swe_ci_iterations where task_id = '{task_id}' order by iteration")


def row(iteration, n_passed, a, regressions, fixes, *, n_target, n_base, status="ok", valid=True):
    return approx(
        dict(
            iteration=iteration, status=status, n_target=n_target, n_base=n_base, n_passed=n_passed,
            a=a, regressions=regressions, fixes=fixes, valid=valid,
        )
    )


def test_normalized_change_regressions_and_fixes(con):
    add_run(con)
    add_task(con, "r1", "t1", targets="abcde", passed=["ab", "abc", "a", "abcde"])
    # n(c*) = 5, n(c0) = 2, gap 3.
    assert iterations(con, "t1") == [
        row(0, 2, 0.0, None, None, n_target=5, n_base=2),  # (2-2)/3; nothing before c0
        row(1, 3, 1 / 3, 0, 1, n_target=5, n_base=2),  # (3-2)/3; c fixed
        row(2, 1, -0.5, 2, 0, n_target=5, n_base=2),  # 1 < 2: (1-2)/2; b, c broke
        row(3, 5, 1.0, 0, 4, n_target=5, n_base=2),  # (5-2)/3; b, c, d, e fixed
    ]


def test_swap_is_a_regression_although_the_count_is_unchanged(con):
    add_run(con)
    add_task(con, "r1", "t1", targets="abcd", passed=["a", "ab", "ac"])
    assert iterations(con, "t1")[1:] == [
        row(1, 2, 1 / 3, 0, 1, n_target=4, n_base=1),  # (2-1)/3
        row(2, 2, 1 / 3, 1, 1, n_target=4, n_base=1),  # same count; b broke, c fixed
    ]


def test_agent_that_breaks_everything_scores_minus_one(con):
    add_run(con)
    add_task(con, "r1", "t1", targets="abcd", passed=["ab", ""], statuses={1: "agent_error"})
    assert iterations(con, "t1")[1] == row(
        1, 0, -1.0, 2, 0, n_target=4, n_base=2, status="agent_error"  # (0-2)/2; a, b broke
    )


def test_no_gap_is_invalid_and_never_divides_by_zero(con):
    add_run(con)
    add_task(con, "r1", "no_gap", targets="ab", passed=["ab", "a"])
    add_task(con, "r1", "flagged", targets="ab", passed=["a", "ab"], status="invalid")
    add_task(con, "r1", "empty_t", targets="", passed=[""])
    assert iterations(con, "no_gap") == [
        row(0, 2, None, None, None, n_target=2, n_base=2, valid=False),
        row(1, 1, None, 1, 0, n_target=2, n_base=2, valid=False),  # counts stay, a does not
    ]
    assert [r["a"] for r in iterations(con, "flagged")] == [None, None]
    assert iterations(con, "empty_t") == [row(0, 0, None, None, None, n_target=0, n_base=0, valid=False)]


def test_infrastructure_failed_iteration_has_no_row(con):
    add_run(con)
    add_task(con, "r1", "t1", targets="abcd", passed=["a", "ab", None], status="infra_error")
    assert [r["iteration"] for r in iterations(con, "t1")] == [0, 1]


def test_no_comparison_across_a_missing_iteration(con):
    add_run(con)
    add_task(con, "r1", "t1", targets="abcd", passed=["a", "ab", None, "a"])
    # iteration 3 follows no recorded iteration 2: regressions/fixes unknown, a still defined.
    assert iterations(con, "t1")[2] == row(3, 1, 0.0, None, None, n_target=4, n_base=1)


def test_ignores_other_attempts_tests_outside_t_absent_rows_and_other_protocols(con):
    add_run(con)
    add_task(con, "r1", "t1", targets="abc", passed=["az", "az"])  # z passes but is not in T
    add_results(con, "r1", "t1", 1, {"b": "passed", "c": "passed"}, attempt=1)  # a retry's results
    add_iteration(con, "r1", "t1", 2)
    add_results(con, "r1", "t1", 2, {"a": "passed", "b": "passed"})  # c has no row: not passed
    add_task(con, "r1", "evo", targets="ab", passed=["", "ab"], protocol="swe-evo")
    assert iterations(con, "t1") == [
        row(0, 1, 0.0, None, None, n_target=3, n_base=1),
        row(1, 1, 0.0, 0, 0, n_target=3, n_base=1),  # attempt 1 ignored
        row(2, 2, 0.5, 0, 1, n_target=3, n_base=1),  # (2-1)/2
    ]
    assert iterations(con, "evo") == []


def test_iterations_beyond_the_bitmask_raise_a_clear_error(con):
    add_run(con, max_iterations=200)
    add_task(con, "r1", "t1", targets="ab", passed=["a"])
    add_iteration(con, "r1", "t1", 127)
    add_results(con, "r1", "t1", 127, {"a": "passed"})
    with pytest.raises(duckdb.InvalidInputException, match="iteration 127 > 126"):
        con.execute("select * from swe_ci_iterations").fetchall()
