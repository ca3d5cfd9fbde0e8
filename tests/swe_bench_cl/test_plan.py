"""Which cells a sequence attempts: full and core matrices, and the order the protocol needs."""

from __future__ import annotations

import pytest

from evoci.swe_bench_cl.plan import Cell, Store, cell_count, schedule


@pytest.mark.parametrize("n", [1, 2, 6, 50])
def test_full_and_core_cost_what_the_readme_says(n):
    assert cell_count(n, "full") == n + (n - 1) + n * (n + 1) // 2
    assert cell_count(n, "core") == 4 * n - 2


def test_each_issue_is_stored_after_its_in_sequence_attempt_and_before_its_retests():
    steps = schedule(3, "full")
    stores = [s for s in steps if isinstance(s, Store)]
    assert [(s.position, s.source.stage) for s in stores] == [(1, 0), (2, 1), (3, 2)]
    for store in stores:
        k = steps.index(store)
        assert steps.index(store.source) < k  # attempted with M(j-1) first
        later = [s for s in steps[k + 1:] if isinstance(s, Cell)]
        assert all(c.stage >= store.position for c in later)  # nothing after reads an older memory
    cells = [s for s in steps if isinstance(s, Cell)]
    assert len(set(cells)) == len(cells)
    assert {(c.stage, c.position) for c in cells if c.kind == "retest"} == {
        (1, 1), (2, 1), (2, 2), (3, 1), (3, 2), (3, 3)}


def test_core_keeps_the_diagonal_and_the_final_row():
    retests = {(c.stage, c.position) for c in schedule(4, "core") if isinstance(c, Cell) and c.kind == "retest"}
    assert retests == {(1, 1), (2, 2), (3, 3), (4, 1), (4, 2), (4, 3), (4, 4)}
    with pytest.raises(ValueError, match="full, core"):
        schedule(4, "half")
