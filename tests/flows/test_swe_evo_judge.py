"""The failure-taxonomy judge: each unresolved instance with a prediction gets one label, stored as facts."""

from __future__ import annotations

import json

import pytest

from evoci.agents.scripted import ScriptedLLMServer, text
from evoci.domain import AgentConfig, RunConfig
from evoci.swe_evo.demo import build_swe_evo_demo
from flows.swe_evo import swe_evo
from tests.flows.helpers import query

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]


def test_unresolved_instances_get_one_label_each_through_the_loopback_server(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    records = {r["instance_id"]: r for r in json.loads(build_swe_evo_demo(tmp_path / "swe-evo-demo").read_text())}
    not_applying = records["kvconf_0.1.0_0.2.0"]["patch"].replace("-__version__ = \"0.1.0\"", "-__version__ = \"9.9.9\"")
    predictions = tmp_path / "preds.json"
    predictions.write_text(json.dumps({
        "kvconf_0.1.0_0.2.0": {"model_patch": not_applying},  # does not apply: unresolved, judged
        "kvconf_0.2.0_0.3.0": {"model_patch": records["kvconf_0.2.0_0.3.0"]["patch"]},  # resolved: not judged
        # kvconf_0.3.0_0.3.1 has no prediction: flagged, never judged
    }))
    script = [text("It looks like the agent looped."),  # no JSON: asked again once
              text('{"label": "Tool-Use", "reason": "the patch was cut against the wrong file"}')]
    with ScriptedLLMServer(script) as server:
        judge = AgentConfig(kind="llm", model="gpt-4o", options={
            "provider": "openai", "base_url": server.base_url("openai"), "max_retries": 0})
        config = RunConfig(protocol="swe-evo", programmer=AgentConfig(
            kind="predictions", options={"path": str(predictions)}))
        [summary, *_] = swe_evo("swe-evo-demo", config, home=str(tmp_path), judge=judge)
        assert len(server.requests) == 2
        assert "Values are typed" in json.dumps(server.requests[0].body)  # the release notes are the evidence
    db = tmp_path / "evoci.duckdb"
    assert query(db, "select task_id, judge_model, status, label from failure_labels") == [
        ("kvconf_0.1.0_0.2.0", "gpt-4o", "ok", "Tool-Use")]
    assert query(db, "select count(*) from agent_calls where role = 'judge'") == [(2,)]
    assert query(db, "select judge_model, label, instances, share from swe_evo_failure_modes where run_id = ?",
                 [summary.run_id]) == [("gpt-4o", "Tool-Use", 1, 1.0)]
