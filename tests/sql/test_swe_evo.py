"""SWE-EVO views: swe_evo_instances and swe_evo_runs, on hand-computed rows."""

from __future__ import annotations

import pytest

from tests.sql.other_rows import FAILED, PASSED, add_run, swe_evo_instance

P, F = PASSED, FAILED


@pytest.fixture
def evo(con):
    """Nine instances covering every scoring path (the expected scores are in the tests)."""
    add_run(con, "evo", "swe-evo")
    swe_evo_instance(con, "evo", "i1_resolved", f2p={"a": P, "b": P}, p2p={"c": P})
    swe_evo_instance(con, "evo", "i2_partial", f2p={"a": P, "b": F, "c": F, "d": P}, p2p={"e": P})
    swe_evo_instance(con, "evo", "i3_regression", f2p={"a": P, "b": P}, p2p={"c": P, "d": F})
    swe_evo_instance(con, "evo", "i4_no_row", f2p={"a": P}, p2p={"b": P}, prediction=None)
    swe_evo_instance(con, "evo", "i5_no_prediction", f2p={"a": P}, prediction="no_prediction")
    swe_evo_instance(con, "evo", "i6_empty_f2p", f2p={}, p2p={"a": P})
    swe_evo_instance(con, "evo", "i7_not_applied", f2p={"a": P}, p2p={"b": P}, patch_applied=False)
    swe_evo_instance(con, "evo", "i8_infra", f2p={"a": P}, prediction=None, status="infra_error")
    swe_evo_instance(con, "evo", "i9_missing_outcome", f2p={"a": P, "b": None})
    return con


def test_instances_score_every_path(evo):
    rows = evo.execute(
        "select task_id, has_prediction, patch_applied, invalid, resolved, fix_rate, "
        "f2p_pass_rate, p2p_pass_rate, flags from swe_evo_instances order by task_id"
    ).fetchall()
    assert rows == [
        # all F2P and P2P pass → resolved; fix = 2/2
        ("i1_resolved", True, True, False, True, 1.0, 1.0, 1.0, []),
        # F2P 2 of 4, P2P 1 of 1 → fix = 2/4 = 0.5
        ("i2_partial", True, True, False, False, 0.5, 0.5, 1.0, []),
        # F2P 2 of 2 but P2P 1 of 2 → strict fix = 0; relaxed f2p = 1, p2p = 0.5
        ("i3_regression", True, True, False, False, 0.0, 1.0, 0.5, []),
        # no iteration-1 row: missing prediction → 0 everywhere, flagged, kept
        ("i4_no_row", False, None, False, False, 0.0, 0.0, 0.0, ["missing_prediction"]),
        # iteration status 'no_prediction' is the same; P2P empty → p2p rate undefined
        ("i5_no_prediction", False, None, False, False, 0.0, 0.0, None, ["missing_prediction"]),
        # no F2P target → invalid: scores NULL, never 0/0
        ("i6_empty_f2p", True, True, True, None, None, None, None, ["empty_f2p"]),
        # the patch did not apply: its passing outcomes are ignored → 0
        ("i7_not_applied", True, False, False, False, 0.0, 0.0, 0.0, ["patch_not_applied"]),
        # retries exhausted: counts as 0 (a crashed prediction), flagged
        ("i8_infra", False, None, False, False, 0.0, 0.0, None, ["missing_prediction", "infra_error"]),
        # F2P 'b' has no result row → not passed: 1 of 2; P2P empty holds vacuously → fix = 0.5
        ("i9_missing_outcome", True, True, False, False, 0.5, 0.5, None, ["outcomes_missing"]),
    ]


def test_run_rates_keep_missing_predictions_and_exclude_invalid(evo):
    add_run(evo, "empty", "swe-evo")
    rows = evo.execute(
        "select run_id, instances, valid_instances, invalid_instances, missing_predictions, "
        "infra_errors, predictions, resolved_instances, resolved_rate, patches_applied, "
        "patch_apply_rate, fix_rate, f2p_pass_rate, p2p_pass_rate from swe_evo_runs order by run_id"
    ).fetchall()
    assert rows == [
        # 9 instances, 1 invalid (i6) → 8 valid; missing: i4, i5, i8; predictions: i1 i2 i3 i7 i9
        # resolved 1/8; applied (i1 i2 i3 i9) 4/8
        # fix  = (1 + .5 + 0 + 0 + 0 + 0 + 0 + .5) / 8 = 2/8
        # f2p  = (1 + .5 + 1 + 0 + 0 + 0 + 0 + .5) / 8 = 3/8
        # p2p  = (1 + 1 + .5 + 0 + 0) / 5 (i1 i2 i3 i4 i7; the others have no P2P) = 0.5
        ("empty", 0, 0, 0, 0, 0, 0, 0, None, 0, None, None, None, None),
        ("evo", 9, 8, 1, 3, 1, 5, 1, 0.125, 4, 0.5, 0.25, 0.375, 0.5),
    ]


def test_run_intervals(evo):
    low, high, pa_low, pa_high, fix_low, fix_high = evo.execute(
        "select resolved_rate_low, resolved_rate_high, patch_apply_rate_low, patch_apply_rate_high, "
        "fix_rate_low, fix_rate_high from swe_evo_runs where run_id = 'evo'"
    ).fetchone()
    expected = evo.execute("select wilson_low(1, 8), wilson_high(1, 8), wilson_low(4, 8), wilson_high(4, 8)")
    assert (low, high, pa_low, pa_high) == expected.fetchone()
    # fix rates 1, .5, 0×5, .5: mean .25, squared deviations .5625 + .0625 + 5×.0625 + .0625 = 1,
    # s = sqrt(1/7) = .377964; half-width 1.96·s/√8 = .261916 → [max(0, −.0119), .511916]
    assert fix_low == 0.0
    assert fix_high == pytest.approx(0.25 + 1.96 * (1 / 7) ** 0.5 / 8**0.5)


def test_the_published_interval_with_a_missing_prediction_in_the_denominator(con):
    # 48 instances: 12 resolved, 35 unresolved, 1 without prediction → 12/48 = 25 %, [14.9, 38.8].
    # Dropping the missing one (the official harness) would give 12/47.
    add_run(con, "paper", "swe-evo")
    for k in range(48):
        outcome = P if k < 12 else F
        swe_evo_instance(con, "paper", f"i{k:02}", f2p={"t": outcome}, prediction=None if k == 47 else "ok")
    row = con.execute(
        "select valid_instances, missing_predictions, resolved_rate, round(100 * resolved_rate_low, 1), "
        "round(100 * resolved_rate_high, 1) from swe_evo_runs"
    ).fetchone()
    assert row == (48, 1, 0.25, 14.9, 38.8)


def test_one_valid_instance_has_no_fix_rate_interval(con):
    add_run(con, "one", "swe-evo")
    swe_evo_instance(con, "one", "only", f2p={"a": P, "b": F})
    row = con.execute("select fix_rate, fix_rate_low, fix_rate_high from swe_evo_runs").fetchone()
    assert row == (0.5, None, None)  # s needs n ≥ 2


def test_xfail_passes_and_a_skipped_target_is_neither(con):
    # Official mapping: XFAIL passes; SKIPPED leaves numerator and denominator. All-skipped F2P
    # (0/0 officially, called resolved there) is unresolved with fix rate 0 and flagged.
    add_run(con, "map", "swe-evo")
    swe_evo_instance(con, "map", "xfail", f2p={"a": "xfailed", "b": P}, p2p={"c": "xfailed"})
    swe_evo_instance(con, "map", "all_skipped", f2p={"a": "skipped", "b": "skipped"}, p2p={"c": P})
    swe_evo_instance(con, "map", "one_skipped", f2p={"a": "skipped", "b": P, "d": F}, p2p={"c": "skipped", "e": P})
    swe_evo_instance(con, "map", "skips_aside", f2p={"a": "skipped", "b": P}, p2p={"c": "skipped"})
    swe_evo_instance(con, "map", "xpass", f2p={"a": "xpassed"})
    rows = con.execute("select task_id, resolved, fix_rate, f2p_pass_rate, p2p_pass_rate, flags "
                       "from swe_evo_instances order by task_id").fetchall()
    assert rows == [
        ("all_skipped", False, 0.0, None, 1.0, ["skipped_targets"]),
        ("one_skipped", False, 0.5, 0.5, 1.0, ["skipped_targets"]),
        ("skips_aside", True, 1.0, 1.0, None, ["skipped_targets"]),
        ("xfail", True, 1.0, 1.0, 1.0, []),
        ("xpass", False, 0.0, 0.0, None, []),
    ]


def test_failure_modes_share_the_judged_instances(con):
    add_run(con, "judged", "swe-evo")
    for task_id, label, status in [("a", "Tool-Use", "ok"), ("b", "Tool-Use", "ok"), ("c", "Other", "ok"),
                                   ("d", None, "invalid_output")]:
        con.execute("insert into failure_labels values ('judged', ?, 'm', ?, ?, '', timestamp '2026-01-01')",
                    [task_id, status, label])
    rows = con.execute("select label, instances, share from swe_evo_failure_modes order by label nulls last").fetchall()
    assert rows == [("Other", 1, 0.25), ("Tool-Use", 2, 0.5), (None, 1, 0.25)]
