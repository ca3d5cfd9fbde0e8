"""The Wilson score interval macros against SWE-EVO's published intervals (arXiv 2512.18470, §4.2)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("k", "n", "low_pct", "high_pct"),
    [
        (12, 48, 14.9, 38.8),  # 25.00 %
        (9, 48, 10.2, 31.9),  # 18.75 %
        (5, 48, 4.5, 22.2),  # 10.42 %
        (1, 48, 0.4, 10.9),  # 2.08 %
    ],
)
def test_wilson_matches_the_published_intervals(con, k, n, low_pct, high_pct):
    row = con.execute(
        "select round(100 * wilson_low(?, ?), 1), round(100 * wilson_high(?, ?), 1)", [k, n, k, n]
    ).fetchone()
    assert row == (low_pct, high_pct)


def test_wilson_is_null_without_trials(con):
    assert con.execute("select wilson_low(0, 0), wilson_high(0, 0)").fetchone() == (None, None)


def test_wilson_stays_in_the_unit_interval_at_the_extremes(con):
    low0, high0, low_n, high_n = con.execute(
        "select wilson_low(0, 10), wilson_high(0, 10), wilson_low(10, 10), wilson_high(10, 10)"
    ).fetchone()
    # k = 0: low = 0; high = z²/n / (1 + z²/n) = 0.38416 / 1.38416 = 0.2775
    assert low0 == 0.0
    assert high0 == pytest.approx(0.38416 / 1.38416)
    # k = n mirrors k = 0
    assert low_n == pytest.approx(1 - 0.38416 / 1.38416)
    assert high_n == pytest.approx(1.0)


def test_wilson_takes_another_z(con):
    # z = 1, k = 2, n = 4: p = .5; (.5 + 1/8 ± sqrt(.0625 + 1/64)) / 1.25 = (.625 ± .279508) / 1.25
    low, high = con.execute("select wilson_low(2, 4, z := 1), wilson_high(2, 4, z := 1)").fetchone()
    assert low == pytest.approx((0.625 - 0.0781250**0.5) / 1.25)
    assert high == pytest.approx((0.625 + 0.0781250**0.5) / 1.25)
