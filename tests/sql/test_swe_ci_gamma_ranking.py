"""evoscore_gamma_ranking: rankings flip as γ moves weight between early and late iterations."""

from __future__ import annotations

from pytest import approx

from .swe_ci_rows import add_run, add_task, rows


def make_runs(con):
    # N = 2, |T| = 5, n(c0) = 1, gap 4.
    add_run(con, "fast", max_iterations=2)
    add_task(con, "fast", "t", targets="abcde", passed=["a", "abcd", "abc"])  # a = 3/4, 2/4
    add_run(con, "slow", max_iterations=2)
    add_task(con, "slow", "t", targets="abcde", passed=["a", "a", "abcde"])  # a = 0, 1
    add_run(con, "none", max_iterations=2)
    add_task(con, "none", "t", targets="abcde", passed=["a", None], status="infra_error")


def test_ranking_flips_between_short_and_long_term(con):
    make_runs(con)
    result = rows(con, "select * from evoscore_gamma_ranking(gammas := [0.5, 1, 2]) order by gamma, run_id")
    assert result == [
        # γ = 0.5: fast (.5·.75 + .25·.5)/.75 = 2/3; slow (.25·1)/.75 = 1/3.
        approx(dict(run_id="fast", gamma=0.5, n_scored=1, evoscore=2 / 3, rank=1, rank_change=0)),
        dict(run_id="none", gamma=0.5, n_scored=0, evoscore=None, rank=None, rank_change=None),
        approx(dict(run_id="slow", gamma=0.5, n_scored=1, evoscore=1 / 3, rank=2, rank_change=0)),
        # γ = 1: fast (.75 + .5)/2 = .625; slow (0 + 1)/2 = .5.
        approx(dict(run_id="fast", gamma=1.0, n_scored=1, evoscore=0.625, rank=1, rank_change=0)),
        dict(run_id="none", gamma=1.0, n_scored=0, evoscore=None, rank=None, rank_change=None),
        approx(dict(run_id="slow", gamma=1.0, n_scored=1, evoscore=0.5, rank=2, rank_change=0)),
        # γ = 2: fast (2·.75 + 4·.5)/6 = 3.5/6; slow 4/6 — slow overtakes.
        approx(dict(run_id="fast", gamma=2.0, n_scored=1, evoscore=3.5 / 6, rank=2, rank_change=-1)),
        dict(run_id="none", gamma=2.0, n_scored=0, evoscore=None, rank=None, rank_change=None),
        approx(dict(run_id="slow", gamma=2.0, n_scored=1, evoscore=4 / 6, rank=1, rank_change=1)),
    ]


def test_default_gammas_are_the_papers_sweep(con):
    make_runs(con)
    gammas = rows(con, "select distinct gamma from evoscore_gamma_ranking() order by gamma")
    assert [r["gamma"] for r in gammas] == [0.5, 0.75, 1.0, 1.25, 1.5, 2.0]


def test_ties_share_a_rank_and_rank_change_needs_gamma_one(con):
    make_runs(con)
    add_run(con, "fast_twin", max_iterations=2)
    add_task(con, "fast_twin", "t", targets="abcde", passed=["a", "abcd", "abc"])
    result = rows(con, "select run_id, rank, rank_change from evoscore_gamma_ranking(gammas := [2]) "
                       "where rank is not null order by run_id")
    assert result == [
        dict(run_id="fast", rank=2, rank_change=None),
        dict(run_id="fast_twin", rank=2, rank_change=None),
        dict(run_id="slow", rank=1, rank_change=None),
    ]
