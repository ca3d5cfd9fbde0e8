"""The continual flow's nodes retry infrastructure faults, and the same command again reads everything back."""

from __future__ import annotations

import pytest

from evoci.domain import AgentConfig, RunConfig
from evoci.swe_bench_cl.embedding import EmbeddingConfig
from evoci.flows.continual import continual
from tests.flows.helpers import flow_runs_named, node_states, query

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]


def test_a_fault_is_retried_and_a_second_run_recomputes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOCI_INJECT_FAULTS", "agent@2x1,test@3x1")  # first agent at stage 2, first test at stage 3
    config = RunConfig(protocol="swe-bench-cl", programmer=AgentConfig(kind="gold"), retry_delays_s=[0.1])

    def run():
        [summary] = continual("swe-bench-cl-demo", config, matrix="core", embedding=EmbeddingConfig(kind="hashing"),
                              home=str(tmp_path))
        return summary

    first = run()
    db = tmp_path / "evoci.duckdb"
    counts = "select count(*), count(*) filter (where resolved) from cl_attempts where run_id = ?"
    assert query(db, counts, [first.run_id]) == [(22, 22)]
    assert query(db, "select count(*) from failures where run_id = ?", [first.run_id]) == [(0,)]  # retried, not failed
    assert [(tmp_path / "faults" / node).read_text() for node in ("agent@2", "test@3")] == ["1", "1"]  # both happened

    second = run()
    assert second.run_id == first.run_id
    assert query(db, counts, [first.run_id]) == [(22, 22)]
    assert query(db, "select count(*) from cl_experiences where run_id = ?", [first.run_id]) == [(6,)]
    runs = flow_runs_named("continual-swe-bench-cl-demo-core")
    states = node_states(runs[-1].id)
    attempts = {name: state for name, state in states.items() if name.startswith(("agent", "test"))}
    assert len(attempts) == 44 and set(attempts.values()) == {"Cached"}
