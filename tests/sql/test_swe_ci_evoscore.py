"""evoscore(gamma), evoscore_runs(gamma) and the γ = 1 views swe_ci_evoscore(_runs)."""

from __future__ import annotations

import duckdb
import pytest
from pytest import approx

from .swe_ci_rows import add_run, add_task, rows

COLUMNS = "task_id, last_iteration, padded_iterations, solved, evoscore, reason"


@pytest.fixture
def run(con):
    """Run r1, N = 3, one task per edge case."""
    add_run(con, "r1", max_iterations=3)
    # n(c0) = 1, gap 4: a = 1/4, 2/4, 0/4.
    add_task(con, "r1", "steady", targets="abcde", passed=["a", "ab", "abc", "a"])
    # n(c0) = 2, gap 2: a = 1/2, then solved at 2 → a3 padded to 1.
    add_task(con, "r1", "early", targets="abcd", passed=["ab", "abc", "abcd"])
    # every iteration's tests crash: a = (0-2)/2 = -1 three times.
    add_task(
        con, "r1", "broken", targets="abcd", passed=["ab", "", "", ""],
        statuses={1: "agent_error", 2: "agent_error", 3: "timeout"},
    )
    # iteration 2 failed for infrastructure reasons, retries exhausted.
    add_task(con, "r1", "infra", targets="abcd", passed=["a", "ab", None], status="infra_error")
    add_task(con, "r1", "no_gap", targets="ab", passed=["ab", "ab", "ab", "ab"])
    add_task(con, "r1", "invalid", targets="ab", passed=["a"], status="invalid")
    # stopped at 1 < N without solving: not padded as if solved.
    add_task(con, "r1", "crashed", targets="abcd", passed=["a", "ab"], status="done")
    add_task(con, "r1", "running", targets="abcd", passed=["a", "ab"], status="running")
    # status not yet updated, but solved at 1: scored, padded with a = 1.
    add_task(con, "r1", "running_solved", targets="ab", passed=["a", "ab"], status="running")
    return con


def task_scores(con, gamma: float) -> list[dict]:
    return rows(con, f"select {COLUMNS} from evoscore(gamma := {gamma}) order by task_id")


def expected(scores: dict[str, float]) -> list:
    unscored = {
        "crashed": (1, None, None, None, "incomplete"),
        "infra": (1, None, None, None, "infra_error"),
        "invalid": (0, None, None, None, "invalid"),
        "no_gap": (3, None, None, None, "no_gap"),
        "running": (1, None, None, None, "incomplete"),
    }
    scored = {
        "broken": (3, 0, False),
        "early": (2, 1, True),
        "running_solved": (1, 2, True),
        "steady": (3, 0, False),
    }
    table = {k: (*v, scores[k], None) for k, v in scored.items()} | unscored
    names = COLUMNS.split(", ")
    return [approx(dict(zip(names, (task, *table[task])))) for task in sorted(table)]


def test_gamma_one_is_the_mean_normalized_change(run):
    assert task_scores(run, 1.0) == expected(
        {
            "steady": (0.25 + 0.5 + 0.0) / 3,  # 0.25
            "early": (0.5 + 1 + 1) / 3,  # padded a3 = a2 = 1
            "broken": -1.0,
            "running_solved": (1 + 1 + 1) / 3,
        }
    )


def test_gamma_two_weights_later_iterations(run):
    assert task_scores(run, 2.0) == expected(
        {
            "steady": (2 * 0.25 + 4 * 0.5 + 8 * 0.0) / (2 + 4 + 8),  # 2.5/14
            "early": (2 * 0.5 + 4 * 1 + 8 * 1) / 14,  # 13/14
            "broken": -1.0,
            "running_solved": 1.0,
        }
    )


def test_gamma_half_weights_earlier_iterations(run):
    assert task_scores(run, 0.5) == expected(
        {
            "steady": (0.5 * 0.25 + 0.25 * 0.5 + 0.125 * 0.0) / 0.875,  # 0.25/0.875
            "early": (0.5 * 0.5 + 0.25 * 1 + 0.125 * 1) / 0.875,  # 0.625/0.875
            "broken": -1.0,
            "running_solved": 1.0,
        }
    )


COMPLETENESS = ("tasks_expected", "tasks_unscored", "unscored_reasons", "complete")


def test_runs_average_scored_tasks_only(run):
    add_run(run, "r_empty", max_iterations=3)
    add_run(run, "evo", protocol="swe-evo")
    result = rows(run, "select * from evoscore_runs(gamma := 1.0) order by run_id")
    assert [{k: v for k, v in r.items() if k not in COMPLETENESS} for r in result] == [
        approx(
            dict(
                run_id="r1", gamma=1.0, n_tasks=9, n_scored=4, n_unscored=5,
                evoscore=(0.25 + 2.5 / 3 - 1 + 1) / 4,  # infra/invalid/incomplete left out
            )
        ),
        dict(run_id="r_empty", gamma=1.0, n_tasks=0, n_scored=0, n_unscored=0, evoscore=None),
    ]
    assert [{k: r[k] for k in COMPLETENESS} for r in result] == [
        dict(tasks_expected=9, tasks_unscored=5, complete=False,
             unscored_reasons={"incomplete": 2, "infra_error": 1, "invalid": 1, "no_gap": 1}),
        dict(tasks_expected=0, tasks_unscored=0, unscored_reasons={}, complete=False),  # nothing to score
    ]


def test_gamma_one_views_match_the_macros(run):
    assert rows(run, "select * from swe_ci_evoscore order by task_id") == rows(
        run, "select * from evoscore() order by task_id"
    )
    assert rows(run, "select * from swe_ci_evoscore_runs") == rows(run, "select * from evoscore_runs()")


def test_run_level_gamma_two(run):
    (r1,) = rows(run, "select evoscore from evoscore_runs(gamma := 2)")
    assert r1["evoscore"] == approx((2.5 / 14 + 13 / 14 - 1 + 1) / 4)


def test_unknown_n_and_gaps_are_not_scored(con):
    add_run(con, "r_no_n", max_iterations=None)
    add_task(con, "r_no_n", "t", targets="ab", passed=["a", "ab"])
    add_run(con, "r_short", max_iterations=1)
    add_task(con, "r_short", "beyond", targets="abc", passed=["a", "ab", "abc"])
    add_task(con, "r_short", "hole", targets="abc", passed=["a", None, "abc"])
    add_task(con, "r_short", "not_started", targets="abc", passed=[], status="running")
    result = rows(con, "select run_id, task_id, evoscore, reason from evoscore() order by all")
    assert result == [
        dict(run_id="r_no_n", task_id="t", evoscore=None, reason="no_max_iterations"),
        dict(run_id="r_short", task_id="beyond", evoscore=None, reason="beyond_max_iterations"),
        dict(run_id="r_short", task_id="hole", evoscore=None, reason="beyond_max_iterations"),
        dict(run_id="r_short", task_id="not_started", evoscore=None, reason="incomplete"),
    ]


def test_missing_iteration_is_not_scored(con):
    add_run(con, "r1", max_iterations=3)
    add_task(con, "r1", "hole", targets="abc", passed=["a", None, "abc"])
    assert rows(con, "select evoscore, reason from evoscore()") == [dict(evoscore=None, reason="missing_iteration")]


@pytest.mark.parametrize("gamma", ["0", "-1.5", "null"])
def test_gamma_must_be_positive(con, gamma):
    add_run(con)
    add_task(con, "r1", "t", targets="ab", passed=["a", "ab"])
    with pytest.raises(duckdb.InvalidInputException, match="gamma must be > 0"):
        con.execute(f"select * from evoscore(gamma := {gamma})").fetchall()
    with pytest.raises(duckdb.InvalidInputException, match="gamma must be > 0"):
        con.execute(f"select * from evoscore_runs(gamma := {gamma})").fetchall()
