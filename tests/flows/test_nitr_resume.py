"""NITR runs resume like evolve: an infrastructure fault is never scored, the same command resumes,
completed nodes come back from the cache, and facts are never written twice. Attempts repeat a probe."""

from __future__ import annotations

import pytest

from evoci.flows.nitr import nitr
from tests.flows.helpers import query
from tests.flows.test_nitr import reference_config

pytestmark = pytest.mark.usefixtures("prefect_server")

COUNTS = """select (select count(*) from iterations where run_id = 'resume'),
                   (select count(*) from test_results where run_id = 'resume'),
                   (select count(*) from trajectories where run_id = 'resume')"""


@pytest.mark.slow
def test_an_infrastructure_fault_is_not_scored_and_the_same_command_resumes(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOCI_INJECT_FAULTS", "nitr-grade@3x1")  # the multi-step probe's final grade fails once
    db, home = tmp_path / "r.duckdb", str(tmp_path / "home")
    config = reference_config("resume", "intended").model_copy(update={"attempts": 2})
    select = {"id": ["001", "004"]}
    with pytest.raises(RuntimeError, match="1 probe\\(s\\) failed"):
        nitr("builtin", config, select=select, home=home, db=str(db))
    assert dict(query(db, "select task_id, category from nitr_probes")) == {
        "001.invoice-summary-reuse": "Pass", "004.report-exporters": None}  # never scored as a failure
    assert query(db, "select task_id, kind, error_type from failures") == [
        ("004.report-exporters", "infrastructure", "SandboxError")]
    assert query(db, "select status from tasks where task_id = '004.report-exporters'") == [("infra_error",)]

    nitr("builtin", config, select=select, home=home, db=str(db))  # the same command: resumes
    assert dict(query(db, "select task_id, category from nitr_probes")) == {
        "001.invoice-summary-reuse": "Pass", "004.report-exporters": "Pass"}
    before = query(db, COUNTS)
    assert before == [(2 * 1 + 2 * 3, 2 * 4 + 2 * 4, 2 * 1 + 2 * 3)]  # attempts × steps; graded steps × targets
    nitr("builtin", config, select=select, home=home, db=str(db))  # everything cached: nothing new
    assert query(db, COUNTS) == before
    assert query(db, "select task_id, attempts, n_pass, stability from nitr_stability order by task_id") == [
        ("001.invoice-summary-reuse", 2, 2, 1.0), ("004.report-exporters", 2, 2, 1.0)]
