"""swe_ci_zero_regression (per task) and swe_ci_zero_regression_runs (per run)."""

from __future__ import annotations

from pytest import approx

from .swe_ci_rows import add_run, add_task, rows


def make_run(con):
    add_run(con, "r1", max_iterations=3)
    add_task(con, "r1", "clean", targets="abcd", passed=["a", "ab", "abc", "abc"])
    # i2 swaps b for c: n stays 2, yet b regressed.
    add_task(con, "r1", "swap", targets="abcd", passed=["a", "ab", "ac", "acd"])
    # i1 and i3 crash: a, b break twice (against c0 at i1).
    add_task(
        con, "r1", "broken", targets="abcd", passed=["ab", "", "ab", ""],
        statuses={1: "agent_error", 3: "agent_error"},
    )
    # regressed at i1, then the infrastructure failed: no score, not a regression verdict.
    add_task(con, "r1", "infra", targets="abcd", passed=["ab", "a", None], status="infra_error")
    add_run(con, "r_empty")


def test_zero_regression_per_task(con):
    make_run(con)
    assert rows(con, "select * from swe_ci_zero_regression order by task_id") == [
        dict(run_id="r1", task_id="broken", scored=True, zero_regression=False,
             regression_iterations=2, regressed_tests=4, reason=None),  # 2 at i1 + 2 at i3
        dict(run_id="r1", task_id="clean", scored=True, zero_regression=True,
             regression_iterations=0, regressed_tests=0, reason=None),
        dict(run_id="r1", task_id="infra", scored=False, zero_regression=None,
             regression_iterations=None, regressed_tests=None, reason="infra_error"),
        dict(run_id="r1", task_id="swap", scored=True, zero_regression=False,
             regression_iterations=1, regressed_tests=1, reason=None),
    ]


COMPLETENESS = ("tasks_expected", "tasks_unscored", "unscored_reasons", "complete")


def test_zero_regression_rate_is_over_scored_tasks(con):
    make_run(con)
    result = rows(con, "select * from swe_ci_zero_regression_runs order by run_id")
    assert [{k: v for k, v in r.items() if k not in COMPLETENESS} for r in result] == [
        approx(dict(run_id="r1", n_tasks=4, n_scored=3, n_unscored=1, n_zero_regression=1,
                    zero_regression_rate=1 / 3)),  # clean only, out of clean/swap/broken
        dict(run_id="r_empty", n_tasks=0, n_scored=0, n_unscored=0, n_zero_regression=0,
             zero_regression_rate=None),
    ]
    assert [r["complete"] for r in result] == [False, False]  # r1 lost a task; r_empty scored nothing


def test_padded_iterations_cannot_regress(con):
    add_run(con, "r1", max_iterations=20)
    add_task(con, "r1", "early", targets="ab", passed=["a", "ab"])
    assert rows(con, "select zero_regression from swe_ci_zero_regression") == [dict(zero_regression=True)]
