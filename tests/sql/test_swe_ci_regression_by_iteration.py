"""swe_ci_regression_by_iteration and swe_ci_regression_trend."""

from __future__ import annotations

import math

from pytest import approx

from .swe_ci_rows import add_run, add_task, rows


def make_runs(con):
    add_run(con, "r1", max_iterations=3)
    # |T| = 4; regressions: i1 0, i2 2 (b, c), i3 0.
    add_task(con, "r1", "p", targets="abcd", passed=["ab", "abc", "a", "abcd"])
    # |T| = 8; regressions: i1 1 (a), i2 0, i3 2 (b, c).
    add_task(con, "r1", "q", targets="abcdefgh", passed=["abcd", "bcde", "bcdef", "defgh"])
    # solved at 1: reaches i1 only (padded i2, i3 are not reached).
    add_task(con, "r1", "r", targets="ab", passed=["a", "ab"])
    # unscored: its i1 regression is not counted.
    add_task(con, "r1", "s", targets="ab", passed=["a", ""], status="infra_error")
    # one iteration only → one point → correlations undefined.
    add_run(con, "r_one", max_iterations=1)
    add_task(con, "r_one", "t", targets="ab", passed=["a", "b"])
    # never regresses → rate has zero variance, magnitude has no points.
    add_run(con, "r_flat", max_iterations=2)
    add_task(con, "r_flat", "t", targets="abc", passed=["a", "ab", "ab"])


def test_regression_rate_and_magnitude_per_iteration(con):
    make_runs(con)
    assert rows(con, "select * from swe_ci_regression_by_iteration where run_id = 'r1' order by iteration") == [
        # i1: p, q, r reached; q regressed 1/8.
        approx(dict(run_id="r1", iteration=1, n_tasks_reached=3, n_tasks_regressed=1,
                    regression_rate=1 / 3, regression_magnitude=1 / 8,
                    mean_regressed_share=(0 + 1 / 8 + 0) / 3)),
        # i2: p, q reached; p regressed 2/4.
        approx(dict(run_id="r1", iteration=2, n_tasks_reached=2, n_tasks_regressed=1,
                    regression_rate=1 / 2, regression_magnitude=2 / 4,
                    mean_regressed_share=(2 / 4 + 0) / 2)),
        # i3: p, q reached; q regressed 2/8.
        approx(dict(run_id="r1", iteration=3, n_tasks_reached=2, n_tasks_regressed=1,
                    regression_rate=1 / 2, regression_magnitude=2 / 8,
                    mean_regressed_share=(0 + 2 / 8) / 2)),
    ]


def test_trend_is_pearson_correlation_with_the_iteration(con):
    make_runs(con)
    # rate (1/3, 1/2, 1/2) vs (1, 2, 3): dx = (-1, 0, 1), dy = (-1/9, 1/18, 1/18),
    #   Σdxdy = 1/6, Σdx² = 2, Σdy² = 1/54 → (1/6)/√(2/54) = √3/2.
    # magnitude in eighths (1, 4, 2): dy = (-4/3, 5/3, -1/3), Σdxdy = 1, Σdy² = 42/9
    #   → 1/√(2·42/9) = 3/√84.
    assert rows(con, "select * from swe_ci_regression_trend order by run_id") == [
        approx(dict(run_id="r1", n_rate_points=3, regression_rate_corr=math.sqrt(3) / 2,
                    n_magnitude_points=3, regression_magnitude_corr=3 / math.sqrt(84))),
        # zero variance (rate always 0) and no magnitude points: undefined → NULL.
        dict(run_id="r_flat", n_rate_points=2, regression_rate_corr=None,
             n_magnitude_points=0, regression_magnitude_corr=None),
        # a single point: undefined → NULL.
        dict(run_id="r_one", n_rate_points=1, regression_rate_corr=None,
             n_magnitude_points=1, regression_magnitude_corr=None),
    ]
