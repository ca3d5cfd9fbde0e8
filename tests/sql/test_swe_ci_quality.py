"""swe_ci_quality, swe_ci_quality_final and swe_ci_quality_runs, on measurements of small files
whose MI and pylint scores are computed by hand (tests/swe_ci/test_quality.py)."""

from __future__ import annotations

import pytest
from pytest import approx

from evoci.swe_ci.quality import measure
from evoci.tasks.quality import ORACLE_ITERATION, insert
from tests.swe_ci.test_quality import BASE, BRANCHY, CLEAN, CLEAN_MI, MESSY, MESSY_MI, tree

from .swe_ci_rows import add_run, add_task, rows


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """MI and pylint of the three hand-computed files: MESSY 81.99 / 2.5, CLEAN 81.99 / 10, BRANCHY 78.02 / 10."""
    root = tmp_path_factory.mktemp("trees")
    base = tree(root / "base", {"pkg/double.py": BASE})
    return {name: measure(tree(root / name, {"pkg/double.py": text}), base)
            for name, text in (("messy", MESSY), ("clean", CLEAN), ("branchy", BRANCHY))}


def add_measured_task(con, measured, task_id, *, passed, codes, oracle):
    """A task of run r1 whose codebase at iteration i is ``codes[i]`` (0 = base) and whose oracle is ``oracle``."""
    add_task(con, "r1", task_id, targets="abc", passed=passed)
    for iteration, name in enumerate(codes):
        insert(con, "r1", task_id, iteration, f"sha{iteration}", measured[name])
    insert(con, "r1", task_id, ORACLE_ITERATION, "oracle", measured[oracle])


def make_run(con, measured):
    add_run(con, "r1", max_iterations=3)
    # Solved at 2; final MESSY against CLEAN: MI tie (81.99 = 81.99), pylint loss (2.5 < 10).
    add_measured_task(con, measured, "tie_loss", passed=["a", "ab", "abc"], codes=["messy", "clean", "messy"],
                      oracle="clean")
    # Solved at 1; final CLEAN against BRANCHY: MI win (81.99 > 78.02), pylint tie.
    add_measured_task(con, measured, "win_tie", passed=["a", "abc"], codes=["messy", "clean"], oracle="branchy")
    # Solved at 1; final BRANCHY against CLEAN: MI loss, pylint tie.
    add_measured_task(con, measured, "loss_tie", passed=["a", "abc"], codes=["messy", "branchy"], oracle="clean")
    # Not solved: CLEAN against MESSY would win on pylint, but only solved tasks count.
    add_measured_task(con, measured, "unsolved", passed=["a", "ab", "ab", "ab"],
                      codes=["messy", "clean", "clean", "clean"], oracle="messy")


def test_every_codebase_next_to_the_oracle(con, measured):
    make_run(con, measured)
    got = rows(con, "select iteration, codebase, mi, pylint_score, changed_lines, oracle_mi, oracle_pylint_score, "
                    "mi_vs_oracle, pylint_vs_oracle, changed_lines_ratio from swe_ci_quality "
                    "where task_id = 'tie_loss' order by iteration")
    # Changed lines against BASE (2 lines): MESSY +5 −1, CLEAN +6 −2 (every line differs).
    assert got == [
        approx(dict(iteration=-1, codebase="oracle", mi=CLEAN_MI, pylint_score=10.0, changed_lines=8,
                    oracle_mi=CLEAN_MI, oracle_pylint_score=10.0, mi_vs_oracle=0, pylint_vs_oracle=0,
                    changed_lines_ratio=1.0), abs=1e-3),
        approx(dict(iteration=0, codebase="base", mi=MESSY_MI, pylint_score=2.5, changed_lines=6,
                    oracle_mi=CLEAN_MI, oracle_pylint_score=10.0, mi_vs_oracle=MESSY_MI - CLEAN_MI,
                    pylint_vs_oracle=-7.5, changed_lines_ratio=6 / 8), abs=1e-3),
        approx(dict(iteration=1, codebase="agent", mi=CLEAN_MI, pylint_score=10.0, changed_lines=8,
                    oracle_mi=CLEAN_MI, oracle_pylint_score=10.0, mi_vs_oracle=0, pylint_vs_oracle=0,
                    changed_lines_ratio=1.0), abs=1e-3),
        approx(dict(iteration=2, codebase="agent", mi=MESSY_MI, pylint_score=2.5, changed_lines=6,
                    oracle_mi=CLEAN_MI, oracle_pylint_score=10.0, mi_vs_oracle=MESSY_MI - CLEAN_MI,
                    pylint_vs_oracle=-7.5, changed_lines_ratio=6 / 8), abs=1e-3),
    ]


def test_final_code_against_the_oracle_per_task(con, measured):
    make_run(con, measured)
    assert rows(con, "select task_id, solved, final_iteration, mi_outcome, pylint_outcome "
                     "from swe_ci_quality_final order by task_id") == [
        dict(task_id="loss_tie", solved=True, final_iteration=1, mi_outcome="loss", pylint_outcome="tie"),
        dict(task_id="tie_loss", solved=True, final_iteration=2, mi_outcome="tie", pylint_outcome="loss"),
        dict(task_id="unsolved", solved=False, final_iteration=3, mi_outcome="tie", pylint_outcome="win"),
        dict(task_id="win_tie", solved=True, final_iteration=1, mi_outcome="win", pylint_outcome="tie"),
    ]


def test_win_loss_rates_over_solved_tasks(con, measured):
    make_run(con, measured)
    assert rows(con, "select * from swe_ci_quality_runs") == [approx(dict(
        run_id="r1", n_solved=3,
        n_mi_compared=3, mi_win_rate=1 / 3, mi_loss_rate=1 / 3, mi_tie_rate=1 / 3,
        n_pylint_compared=3, pylint_win_rate=0, pylint_loss_rate=1 / 3, pylint_tie_rate=2 / 3,
        mean_changed_lines=(6 + 8 + 10) / 3, mean_oracle_changed_lines=(8 + 10 + 8) / 3,  # BRANCHY: +8 −2
    ))]


def test_no_measurement_gives_null_rates_not_zero(con):
    add_run(con, "r1", max_iterations=3)
    add_task(con, "r1", "t", targets="abc", passed=["a", "abc"])
    assert rows(con, "select n_solved, n_mi_compared, mi_win_rate, pylint_loss_rate from swe_ci_quality_runs") == [
        dict(n_solved=1, n_mi_compared=0, mi_win_rate=None, pylint_loss_rate=None)]
    assert rows(con, "select mi_outcome, pylint_outcome from swe_ci_quality_final") == [
        dict(mi_outcome=None, pylint_outcome=None)]
