"""NITR views: nitr_probes, nitr_by_dimension, nitr_by_granularity, nitr_runs."""

from __future__ import annotations

import pytest

from tests.sql.other_rows import add_run, nitr_probe


@pytest.fixture
def nitr(con):
    """One configuration, eight probes: each category once (Pass twice) and two unevaluated."""
    add_run(con, "agent", "nitr")
    nitr_probe(con, "agent", "p1_pass", dimension="D1", functional=True, structural=True)
    nitr_probe(con, "agent", "p2_f", dimension="D1", functional=False, structural=True)
    nitr_probe(con, "agent", "p3_s", dimension="D2", functional=True, structural=False)
    nitr_probe(con, "agent", "p4_b", dimension="D2", granularity="multi-step", steps=3,
               functional=False, structural=False)
    nitr_probe(con, "agent", "p5_e", dimension="D3", granularity="multi-step", steps=2, build_error=True)
    nitr_probe(con, "agent", "p6_multi_pass", dimension="D3", granularity="multi-step", steps=3)
    nitr_probe(con, "agent", "p7_infra", dimension="D1", steps=0, status="infra_error")
    nitr_probe(con, "agent", "p8_no_oracle", dimension="D2", structural=None)
    return con


def test_each_probe_gets_its_category(nitr):
    rows = nitr.execute(
        "select task_id, steps, final_step, final_status, functional_pass, structural_pass, category, "
        "evaluated, flags from nitr_probes order by task_id"
    ).fetchall()
    assert rows == [
        ("p1_pass", 1, 1, "ok", True, True, "Pass", True, []),
        ("p2_f", 1, 1, "ok", False, True, "F", True, []),  # functional fails, structural passes
        ("p3_s", 1, 1, "ok", True, False, "S", True, []),  # tests pass, oracle rejects
        ("p4_b", 3, 3, "ok", False, False, "B", True, []),
        ("p5_e", 2, 2, "build_error", None, None, "E", True, []),  # build error at the final step
        # steps 1 and 2 failed everything; the probe is judged at its final step 3
        ("p6_multi_pass", 3, 3, "ok", True, True, "Pass", True, []),
        ("p7_infra", 0, None, None, None, None, None, False, ["infra_error", "not_evaluated"]),
        ("p8_no_oracle", 1, 1, "ok", None, None, None, False, ["empty_structural"]),
    ]


def test_by_dimension(nitr):
    rows = nitr.execute(
        "select dimension, probes, evaluated, unevaluated, n_pass, n_f, n_s, n_b, n_e, pass_rate, s_rate "
        "from nitr_by_dimension order by dimension"
    ).fetchall()
    assert rows == [
        ("D1", 3, 2, 1, 1, 1, 0, 0, 0, 0.5, 0.0),  # Pass, F (+ infra, unevaluated): 1/2
        ("D2", 3, 2, 1, 0, 0, 1, 1, 0, 0.0, 0.5),  # S, B (+ no oracle): pass 0/2, S 1/2
        ("D3", 2, 2, 0, 1, 0, 0, 0, 1, 0.5, 0.0),  # E, Pass: 1/2
    ]


def test_by_granularity(nitr):
    rows = nitr.execute(
        "select granularity, probes, evaluated, unevaluated, n_pass, n_f, n_s, n_b, n_e, pass_rate, s_rate "
        "from nitr_by_granularity order by granularity"
    ).fetchall()
    assert rows == [
        ("micro", 5, 3, 2, 1, 1, 1, 0, 0, 1 / 3, 1 / 3),  # Pass, F, S of 3 evaluated
        ("multi-step", 3, 3, 0, 1, 0, 0, 1, 1, 1 / 3, 0.0),  # B, E, Pass
    ]


def test_runs(nitr):
    add_run(nitr, "idle", "nitr")
    rows = nitr.execute(
        "select run_id, probes, evaluated, unevaluated, n_pass, n_f, n_s, n_b, n_e, pass_rate, s_rate, "
        "f_rate, b_rate, e_rate, s_share_of_functional_passes from nitr_runs order by run_id"
    ).fetchall()
    assert rows == [
        # 6 evaluated: Pass 2, F, S, B, E → pass 2/6; S-rate 1/6 (denominator: all evaluated
        # probes, as "64 of 483 evaluated pairs"); S among functional passes 1/(1 + 2)
        ("agent", 8, 6, 2, 2, 1, 1, 1, 1, 1 / 3, 1 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 3),
        ("idle", 0, 0, 0, 0, 0, 0, 0, 0, None, None, None, None, None, None),
    ]


def test_rates_carry_wilson_intervals(nitr):
    row = nitr.execute(
        "select pass_rate_low, pass_rate_high, s_rate_low, s_rate_high from nitr_runs where run_id = 'agent'"
    ).fetchone()
    expected = nitr.execute("select wilson_low(2, 6), wilson_high(2, 6), wilson_low(1, 6), wilson_high(1, 6)")
    assert row == expected.fetchone()
    by_dim = nitr.execute(
        "select pass_rate_low, pass_rate_high from nitr_by_dimension where dimension = 'D1'"
    ).fetchone()
    assert by_dim == nitr.execute("select wilson_low(1, 2), wilson_high(1, 2)").fetchone()
