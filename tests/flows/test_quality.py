"""Code quality through the real flow: the demo's base, every iteration and the oracle are measured."""

from __future__ import annotations

import pytest

from evoci.cli import main
from tests.swe_ci.demo.expected import PASSING_WITH_ORACLE_TESTS
from tests.flows.helpers import query

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]


def test_demo_records_quality_and_its_replayed_final_code_ties_the_oracle(tmp_path):
    home = tmp_path / "home"
    assert main(["run", "demo", "--home", str(home), "--code-quality"]) == 0
    db = home / "evoci.duckdb"
    last = len(PASSING_WITH_ORACLE_TESTS) - 1
    measured = query(db, "select iteration, codebase, files > 0, mi between 0 and 100, pylint_score between 0 and 10, "
                         "error from swe_ci_quality order by iteration")
    assert measured == [(-1, "oracle", True, True, True, None), (0, "base", True, True, True, None),
                        *[(i, "agent", True, True, True, None) for i in range(1, last + 1)]]
    # The human-replay agent reaches the oracle's code, so its final code is the oracle's.
    assert query(db, "select solved, mi_outcome, pylint_outcome, changed_lines = oracle_changed_lines "
                     "from swe_ci_quality_final") == [(True, "tie", "tie", True)]
    assert query(db, "select n_solved, mi_tie_rate, pylint_tie_rate from swe_ci_quality_runs") == [(1, 1.0, 1.0)]


def test_quality_is_measured_only_when_asked_for(tmp_path):
    home = tmp_path / "home"
    assert main(["run", "demo", "--home", str(home), "--max-iterations", "2"]) == 0
    assert query(home / "evoci.duckdb", "select count(*) from code_quality") == [(0,)]
