"""The LLM agent on SWE-EVO: the real SDK against the loopback server, a tool loop that edits the base."""

from __future__ import annotations

import json

import pytest

from evoci.agents.scripted import ScriptedLLMServer, text, tool_call
from evoci.domain import AgentConfig, RunConfig
from evoci.swe_evo.prompt import SYSTEM_PROMPT
from flows.swe_evo import swe_evo
from tests.flows.helpers import query

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

FIX = {"path": "src/kvconf/parser.py", "old": "line = raw.strip()", "new": 'line = raw.split(" #", 1)[0].strip()'}


def reply(protocol: str, body: dict):
    """Implement 0.3.1 (read, then fix the parser, then answer); give up on the other releases."""
    conversation = json.dumps(body["messages"])
    if "implement release 0.3.1" not in conversation:
        return text("I could not find where to start.")
    turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if turns == 0:
        return tool_call("read_file", {"path": "src/kvconf/parser.py"})
    if turns == 1:
        return tool_call("replace_text", FIX)
    return text("Inline comments after ' #' are now stripped.")


def test_the_llm_agent_implements_a_release_through_its_tools(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-llm")
    with ScriptedLLMServer(reply) as server:
        agent = AgentConfig(kind="llm", model="gpt-4o", options={"provider": "openai", "base_url": server.base_url("openai")})
        [summary, *_] = swe_evo("swe-evo-demo", RunConfig(protocol="swe-evo", programmer=agent), home=str(tmp_path))
        systems = {m["content"] for r in server.requests for m in r.body["messages"] if m["role"] == "system"}
    assert systems == {SYSTEM_PROMPT}
    db = tmp_path / "evoci.duckdb"
    assert query(db, "select task_id, has_prediction, resolved from swe_evo_instances order by task_id") == [
        ("kvconf_0.1.0_0.2.0", False, False), ("kvconf_0.2.0_0.3.0", False, False), ("kvconf_0.3.0_0.3.1", True, True)]
    assert query(db, "select resolved_instances, valid_instances, missing_predictions from swe_evo_runs") == [(1, 3, 2)]
    # Every model call is accounted for, under the instance that paid for it.
    assert query(db, "select task_id, count(*) from agent_calls where run_id = ? group by task_id order by task_id",
                 [summary.run_id]) == [("kvconf_0.1.0_0.2.0", 1), ("kvconf_0.2.0_0.3.0", 1), ("kvconf_0.3.0_0.3.1", 3)]
