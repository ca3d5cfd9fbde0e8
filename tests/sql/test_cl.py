"""SWE-Bench-CL views: cl_attempts, cl_matrix, cl_metrics(...), cl_run_metrics(...).

a(i, j) = issue j attempted with memory M(i) (memory after issues 1..i; M(0) = memory off).
"""

from __future__ import annotations

import duckdb
import pytest

from tests.sql.other_rows import add_run, cl_attempt, cl_issue, cl_matrix_rows

# Sequence "s", N = 3. a(3, 2) was not evaluated; a(1, 3) is 'ahead' (never evaluated by design).
#            j=1   j=2   j=3
#   i=0       0     0     1      memory off
#   i=1       1     1     .      a(1,2) = in-sequence attempt of issue 2
#   i=2      .5     0     0      a(2,3) = in-sequence attempt of issue 3
#   i=3      .5  NULL     1
S_MATRIX = {
    (0, 1): 0, (0, 2): 0, (0, 3): 1,
    (1, 1): 1, (1, 2): 1,
    (2, 1): 0.5, (2, 2): 0, (2, 3): 0,
    (3, 1): 0.5, (3, 3): 1,
}
# Sequence "t", N = 2, complete.
T_MATRIX = {(0, 1): 1, (0, 2): 0, (1, 1): 1, (1, 2): 1, (2, 1): 1, (2, 2): 1}


@pytest.fixture
def cl(con):
    add_run(con, "cl", "swe-bench-cl")
    for position in (1, 2, 3):
        cl_issue(con, "cl", "s", position)
    for position in (1, 2):
        cl_issue(con, "cl", "t", position)
    cl_matrix_rows(con, "cl", "s", S_MATRIX)
    cl_matrix_rows(con, "cl", "t", T_MATRIX)
    return con


def test_matrix_is_the_full_grid_with_null_where_not_evaluated(cl):
    rows = cl.execute(
        "select memory_stage, sequence_position, cell, attempts, resolved_attempts, a "
        "from cl_matrix where sequence_id = 's' order by memory_stage, sequence_position"
    ).fetchall()
    assert rows == [
        (0, 1, "memory_off", 1, 0, 0.0),
        (0, 2, "memory_off", 1, 0, 0.0),
        (0, 3, "memory_off", 1, 1, 1.0),
        (1, 1, "retest", 1, 1, 1.0),
        (1, 2, "in_sequence", 1, 1, 1.0),
        (1, 3, "ahead", 0, 0, None),
        (2, 1, "retest", 2, 1, 0.5),  # 1 of 2 attempts resolved
        (2, 2, "retest", 1, 0, 0.0),
        (2, 3, "in_sequence", 1, 0, 0.0),
        (3, 1, "retest", 2, 1, 0.5),
        (3, 2, "retest", 0, 0, None),  # not evaluated: NULL, not 0
        (3, 3, "retest", 1, 1, 1.0),
    ]


def test_invalid_issues_have_null_entries(con):
    add_run(con, "bad", "swe-bench-cl")
    no_f2p = cl_issue(con, "bad", "u", 1, f2p=0)
    crashed = cl_issue(con, "bad", "u", 2, status="infra_error")
    cl_attempt(con, "bad", no_f2p, 0, True)  # "passes" vacuously, yet there is nothing to resolve
    cl_attempt(con, "bad", no_f2p, 1, True)
    cl_attempt(con, "bad", crashed, 1, True)
    rows = con.execute(
        "select memory_stage, sequence_position, attempts, a from cl_matrix "
        "where attempts > 0 order by memory_stage, sequence_position"
    ).fetchall()
    assert rows == [(0, 1, 1, None), (1, 1, 1, None), (1, 2, 1, None)]
    resolved = con.execute("select valid, resolved from cl_attempts order by task_id, memory_stage").fetchall()
    assert resolved == [(False, None)] * 3


METRIC_COLUMNS = "sequence_id, n_tasks, cells_missing, acc, forgetting, ft, bwt, aulc, tue, cl_p, cl_s, cl_f1, cl_fbeta"


def test_metrics_per_sequence_with_defaults(cl):
    rows = cl.execute(f"select {METRIC_COLUMNS}, cl_score from cl_metrics_default order by sequence_id").fetchall()
    s, t = rows
    # Sequence s (N = 3):
    #   ACC  = mean(a(3,1), a(3,2), a(3,3)) = mean(.5, NULL, 1) = .75
    #   F    = mean_j<3 (max_{j≤k≤2} a(k,j) − a(3,j)): j=1: max(1, .5) − .5 = .5; j=2: a(3,2) NULL → out
    #   FT   = mean(a(1,2) − a(0,2), a(2,3) − a(0,3)) = mean(1 − 0, 0 − 1) = 0
    #   BWT  = mean(a(3,1) − a(1,1), a(3,2) − a(2,2)) = mean(.5 − 1, NULL) = −.5
    #   diag = 1, 0, 1 → CL-P = 2/3; running means 1, 1/2, 2/3 → AULC = (1 + 1/2 + 2/3)/3 = 13/18
    #   TUE  = NULL (no wall_s recorded); CL-S = 1 − .5 = .5
    #   CL-F1 = 2·(2/3)·(1/2) / (2/3 + 1/2) = (2/3)/(7/6) = 4/7 = CL-Fβ(β=1)
    #   CL-Score = .75 − .5 + 0 + (−.5) + 13/18 + 4/7 = −1/4 + 13/18 + 4/7 = 263/252
    #   cells_missing = 1 (a(3,2); a(1,3) is 'ahead' and not expected)
    assert s[:3] == ("s", 3, 1)
    assert s[3:] == pytest.approx((0.75, 0.5, 0.0, -0.5, 13 / 18, None, 2 / 3, 0.5, 4 / 7, 4 / 7, 263 / 252))
    # Sequence t (N = 2): ACC = 1; F = a(1,1) − a(2,1) = 0; FT = a(1,2) − a(0,2) = 1;
    #   BWT = a(2,1) − a(1,1) = 0; diag 1, 1 → P = 1, AULC = 1; S = 1; F1 = 1;
    #   CL-Score = 1 − 0 + 1 + 0 + 1 + 1 = 4
    assert t == ("t", 2, 0, 1.0, 0.0, 1.0, 0.0, 1.0, None, 1.0, 1.0, 1.0, 1.0, 4.0)


@pytest.mark.parametrize(
    ("beta", "fbeta"),
    [
        # P = 2/3, S = 1/2; Fβ = (1 + β²)·P·S / (β²·P + S), P·S = 1/3
        (0.5, 5 / 8),  # 1.25·(1/3) / (.25·2/3 + 1/2) = (5/12) / (2/3) = 5/8
        (1.0, 4 / 7),  # 2·(1/3) / (2/3 + 1/2) = (2/3) / (7/6) = 4/7
        (2.0, 10 / 19),  # 5·(1/3) / (8/3 + 1/2) = (5/3) / (19/6) = 10/19
    ],
)
def test_cl_fbeta(cl, beta, fbeta):
    row = cl.execute("select beta, cl_fbeta from cl_metrics(beta := ?) where sequence_id = 's'", [beta]).fetchone()
    assert row == pytest.approx((beta, fbeta))


def test_cl_score_with_custom_weights(cl):
    score = cl.execute(
        "select cl_score from cl_metrics(beta := 2, lambda_f := 0, lambda_ft := 2, lambda_bwt := 0.5, "
        "lambda_aulc := 0) where sequence_id = 's'"
    ).fetchone()[0]
    # ACC − 0·F + 2·FT + .5·BWT + 0·AULC + Fβ(2) = .75 + 0 − .25 + 10/19 = 19/38 + 20/38 = 39/38
    assert score == pytest.approx(39 / 38)


@pytest.mark.parametrize("arguments", ["beta := 0", "lambda_f := -1", "lambda_aulc := -0.5"])
def test_out_of_range_parameters_raise(cl, arguments):
    with pytest.raises(duckdb.InvalidInputException, match="cl_metrics"):
        cl.execute(f"select * from cl_metrics({arguments})").fetchall()


def test_run_level_metrics_average_the_sequences(cl):
    row = cl.execute(
        "select run_id, sequences, n_tasks, cells_missing, acc, forgetting, ft, bwt, aulc, tue, cl_p, cl_s, "
        "cl_f1, cl_fbeta, cl_score from cl_run_metrics_default"
    ).fetchone()
    # means of s and t: ACC (.75 + 1)/2; F (.5 + 0)/2; FT (0 + 1)/2; BWT (−.5 + 0)/2;
    # AULC (13/18 + 1)/2 = 31/36; P (2/3 + 1)/2 = 5/6; S (.5 + 1)/2; F1 (4/7 + 1)/2 = 11/14;
    # score (263/252 + 4)/2 = 1271/504
    assert row[:4] == ("cl", 2, 5, 1)
    assert row[4:] == pytest.approx(
        (0.875, 0.25, 0.5, -0.25, 31 / 36, None, 5 / 6, 0.75, 11 / 14, 11 / 14, 1271 / 504)
    )
    custom = cl.execute("select beta, cl_fbeta from cl_run_metrics(beta := 2)").fetchone()
    assert custom == pytest.approx((2.0, (10 / 19 + 1) / 2))


def test_tue_is_the_ratio_of_median_times(con):
    add_run(con, "tue", "swe-bench-cl")
    first, second = cl_issue(con, "tue", "s", 1), cl_issue(con, "tue", "s", 2)
    # resolved: 10 s, 20 s → median 15; all: 10, 20, 30, 40, 50 → median 30; TUE = 15/30
    cl_attempt(con, "tue", first, 0, True, wall_s=10.0)
    cl_attempt(con, "tue", first, 1, True, wall_s=20.0)
    cl_attempt(con, "tue", second, 0, False, wall_s=30.0)
    cl_attempt(con, "tue", second, 1, False, wall_s=40.0)
    cl_attempt(con, "tue", first, 2, False, wall_s=50.0)
    assert con.execute("select tue from cl_metrics_default").fetchone() == (0.5,)


def test_a_single_issue_sequence_leaves_the_transfer_metrics_undefined(con):
    add_run(con, "one", "swe-bench-cl")
    only = cl_issue(con, "one", "s", 1)
    cl_attempt(con, "one", only, 0, False)
    cl_attempt(con, "one", only, 1, True)
    row = con.execute(f"select {METRIC_COLUMNS}, cl_score from cl_metrics_default").fetchone()
    # N = 1: ACC = a(1,1) = 1, CL-P = 1, AULC = 1; F, FT, BWT are empty means → NULL, and so are
    # CL-S, CL-F1, CL-Fβ and CL-Score
    assert row == ("s", 1, 0, 1.0, None, None, None, 1.0, None, 1.0, None, None, None, None)
