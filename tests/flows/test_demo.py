"""The main job: `evoci demo` evolves the built-in task with the replay agent and prints its scores."""

from __future__ import annotations

import pytest

from evoci.cli import main
from tests.swe_ci.demo.expected import ORACLE_TESTS, PASSING_WITH_ORACLE_TESTS
from tests.flows.helpers import query

pytestmark = pytest.mark.usefixtures("prefect_server")


def test_demo_is_solved_at_its_final_iteration_with_hand_computed_scores(tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["demo", "--home", str(home)]) == 0
    printed = capsys.readouterr().out
    assert "EvoScore" in printed and "zero-regression" in printed

    # Hand computation: a(c) = (n − n0) / (n* − n0) when n ≥ n0, else (n − n0) / n0.
    n0, n_star = PASSING_WITH_ORACLE_TESTS[0], ORACLE_TESTS
    expected = [round((n - n0) / (n_star - n0) if n >= n0 else (n - n0) / n0, 6) for n in PASSING_WITH_ORACLE_TESTS]
    db = home / "evoci.duckdb"
    rows = query(db, "select iteration, n_passed, round(a, 6) from swe_ci_iterations order by iteration")
    assert rows == [(i, n, a) for i, (n, a) in enumerate(zip(PASSING_WITH_ORACLE_TESTS, expected))]
    last = len(PASSING_WITH_ORACLE_TESTS) - 1
    assert expected[last] == 1.0  # solved at the final iteration: the oracle's code is reached
    [(solved, turns, evoscore, zero_regression)] = query(db, """
        select s.solved, s.turns, e.evoscore, z.zero_regression
        from swe_ci_solved s join evoscore(gamma := 1.0) e using (run_id, task_id)
        join swe_ci_zero_regression z using (run_id, task_id)""")
    # EvoScore(γ = 1) over N = 20, the solved state carried forward from the last iteration.
    padded = expected[1:] + [1.0] * (20 - last)
    assert (solved, turns, zero_regression) == (True, last, False)  # the demo's one regression
    assert evoscore == pytest.approx(sum(padded) / 20)

    assert main(["sql", "select round(evoscore, 3) as e from evoscore(gamma := 1.0)", "--db", str(db)]) == 0
    assert f"{sum(padded) / 20:.3f}" in capsys.readouterr().out
