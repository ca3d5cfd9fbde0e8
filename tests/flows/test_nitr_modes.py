"""NITR's two model modes through the flow, against the scripted loopback model API.

API mode: one call per step, every visible source file inlined (.py included), whole files
back as JSON; a malformed answer is a recorded outcome. Agent mode: the tool loop. Both are
recorded in the run's config, so the views can compare them.
"""

from __future__ import annotations

import json

import pytest

from evoci.agents.scripted import ScriptedLLMServer, text, tool_call
from evoci.domain import AgentConfig, RunConfig
from evoci.flows.nitr import nitr
from evoci.nitr.suites import PROBES
from tests.flows.helpers import query

pytestmark = pytest.mark.usefixtures("prefect_server")

INTENDED = PROBES / "references" / "001.invoice-summary-reuse" / "intended" / "step1" / "src" / "invoice.py"


def model_config(kind: str, server: ScriptedLLMServer) -> AgentConfig:
    return AgentConfig(kind=kind, model="gpt-4.1", options={
        "provider": "openai", "base_url": server.base_url("openai"), "max_retries": 0, "timeout_s": 10})


def user_text(body: dict) -> str:
    return "\n".join(str(m.get("content")) for m in body["messages"] if m["role"] == "user")


@pytest.mark.slow
def test_api_mode_inlines_every_source_file_and_records_malformed_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def answer(protocol: str, body: dict):
        if "Invoice summary" in user_text(body):  # 001: the intended solution, as whole-file JSON
            return text(json.dumps({"files": [{"filename": "src/invoice.py", "content": INTENDED.read_text()}]}))
        return text("Sure! I changed validator.py to count rejections.")  # 002: not the required JSON

    with ScriptedLLMServer(answer) as server:
        agent = model_config("api", server)
        config = RunConfig(run_id="api", protocol="nitr", programmer=agent, architect=agent, node_retries=0)
        nitr("builtin", config, select={"id": ["001", "002"]}, home=str(tmp_path / "home"), db=str(tmp_path / "r.duckdb"))
        prompts = [user_text(r.body) for r in server.requests]
    db = tmp_path / "r.duckdb"
    assert len(prompts) == 2  # one call per step
    invoice = next(p for p in prompts if "Invoice summary" in p)
    assert "=== src/money.py ===" in invoice and "def format_cents" in invoice and "=== app/main.py ===" in invoice
    assert "SPEC" not in invoice and "check_reuse" not in invoice
    assert dict(query(db, "select task_id, category from nitr_probes where run_id = 'api'")) == {
        "001.invoice-summary-reuse": "Pass",
        "002.rejection-count-isolation": "F",  # the untouched starter code: tests fail, the structure is intact
    }
    assert query(db, "select task_id, programmer_status from iterations where run_id = 'api' order by task_id") == [
        ("001.invoice-summary-reuse", "ok"), ("002.rejection-count-isolation", "invalid_output")]
    assert query(db, "select config->>'$.programmer.kind' from runs where run_id = 'api'") == [("api",)]
    assert query(db, "select count(*), sum(input_tokens) > 0 from agent_calls where run_id = 'api'") == [(2, True)]


@pytest.mark.slow
def test_agent_mode_runs_the_tool_loop_with_the_nitr_prompt(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    script = [tool_call("read_file", {"path": "src/invoice.py"}),
              tool_call("write_file", {"path": "src/invoice.py", "content": INTENDED.read_text()}),
              text("Added Invoice.summary() using format_cents.")]
    with ScriptedLLMServer(script) as server:
        agent = model_config("llm", server)
        config = RunConfig(run_id="agent", protocol="nitr", programmer=agent, architect=agent, node_retries=0)
        nitr("builtin", config, select={"id": ["001"]}, home=str(tmp_path / "home"), db=str(tmp_path / "r.duckdb"))
        first = server.requests[0].body["messages"]
    assert "Invoice summary" in first[-1]["content"] and "software engineer" in first[0]["content"]
    assert "maintainab" not in str(first).lower()  # the paper: no hidden hints, no design instructions
    db = tmp_path / "r.duckdb"
    assert query(db, "select category from nitr_probes where run_id = 'agent'") == [("Pass",)]
    assert query(db, "select config->>'$.programmer.kind' from runs where run_id = 'agent'") == [("llm",)]
