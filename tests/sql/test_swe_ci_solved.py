"""swe_ci_solved (per task) and swe_ci_solved_runs (per run)."""

from __future__ import annotations

from pytest import approx

from .swe_ci_rows import add_run, add_task, rows


def make_run(con):
    add_run(con, "r1", max_iterations=3)
    add_task(con, "r1", "early", targets="abc", passed=["a", "ab", "abc"])  # solved at 2
    add_task(con, "r1", "unsolved", targets="abc", passed=["a", "ab", "ab", "ab"])
    add_task(con, "r1", "at_n", targets="abc", passed=["a", "a", "ab", "abc"])  # solved at 3 = N
    # solved at 1, then the infrastructure failed: no score.
    add_task(con, "r1", "infra", targets="abc", passed=["a", "abc"], status="infra_error")


def test_solved_and_turns_per_task(con):
    make_run(con)
    assert rows(con, "select task_id, scored, solved, turns, max_iterations, reason "
                     "from swe_ci_solved order by task_id") == [
        dict(task_id="at_n", scored=True, solved=True, turns=3, max_iterations=3, reason=None),
        dict(task_id="early", scored=True, solved=True, turns=2, max_iterations=3, reason=None),
        dict(task_id="infra", scored=False, solved=None, turns=None, max_iterations=3, reason="infra_error"),
        dict(task_id="unsolved", scored=True, solved=False, turns=3, max_iterations=3, reason=None),
    ]


COMPLETENESS = ("tasks_expected", "tasks_unscored", "unscored_reasons", "complete")


def test_solved_rate_and_average_turns(con):
    make_run(con)
    [result] = rows(con, "select * from swe_ci_solved_runs")
    assert {k: v for k, v in result.items() if k not in COMPLETENESS} == approx(
        dict(run_id="r1", n_tasks=4, n_scored=3, n_unscored=1, n_solved=2,
             solved_rate=2 / 3,  # early, at_n of early/unsolved/at_n
             avg_turns=(2 + 3 + 3) / 3))
    assert {k: result[k] for k in COMPLETENESS} == dict(
        tasks_expected=4, tasks_unscored=1, unscored_reasons={"infra_error": 1}, complete=False)
