"""The LLM agent on SWE-Bench-CL: the real SDK against the loopback server, memory in the prompt, no answers."""

from __future__ import annotations

import json

import pytest

from evoci.agents.scripted import ScriptedLLMServer, text, tool_call
from evoci.domain import AgentConfig, RunConfig
from evoci.swe_bench_cl.embedding import EmbeddingConfig
from evoci.swe_bench_cl.prompt import SYSTEM_PROMPT
from evoci.flows.continual import continual
from tests.flows.helpers import query

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

FIX = {"path": "src/strkit/slug.py", "old": 'return text.lower().replace(" ", "-")',
       "new": 'return "".join(c for c in text.lower() if c.isalnum() or c in " -").replace(" ", "-")'}


def reply(protocol: str, body: dict):
    """Resolve issue 1 (read, fix, answer); give up on the others."""
    if "Issue: evoci__strkit-1\\n" not in json.dumps(body["messages"]):
        return text("I could not find where to start.")
    turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if turns == 0:
        return tool_call("read_file", {"path": "src/strkit/slug.py"})
    if turns == 1:
        return tool_call("replace_text", FIX)
    return text("slugify now drops punctuation.")


def test_the_llm_agent_works_through_the_sequence_with_memory_in_its_prompt(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-llm")
    with ScriptedLLMServer(reply) as server:
        agent = AgentConfig(kind="llm", model="gpt-4o", options={"provider": "openai", "base_url": server.base_url("openai")})
        [summary] = continual("swe-bench-cl-demo", RunConfig(protocol="swe-bench-cl", programmer=agent), matrix="core",
                              embedding=EmbeddingConfig(kind="hashing"), home=str(tmp_path))
        requests = [r.body["messages"] for r in server.requests]
    systems = {m["content"] for messages in requests for m in messages if m["role"] == "system"}
    assert systems == {SYSTEM_PROMPT}
    db = tmp_path / "evoci.duckdb"
    resolved = query(db, "select sequence_position, memory_stage, resolved from cl_attempts where run_id = ? "
                         "and sequence_position = 1 order by memory_stage", [summary.run_id])
    assert resolved == [(1, 0, True), (1, 1, True), (1, 6, True)]
    assert query(db, "select count(*) filter (where resolved) from cl_attempts where run_id = ?", [summary.run_id]) == [(3,)]

    firsts = [next(m["content"] for m in messages if m["role"] == "user") for messages in requests]
    issue2 = [p for p in firsts if "Issue: evoci__strkit-2\n" in p]
    # memory off (stage 0) sees no memory; processing issue 2 with M(1) sees issue 1's experience
    assert any("<memory>" not in p for p in issue2)
    assert any("<memory>" in p and "Issue evoci__strkit-1 (resolved)" in p for p in issue2)
    # no prompt holds a gold patch's lines or a test id of its issue
    curriculum = json.loads((tmp_path / "swe-bench-cl-demo" / "swe-bench-cl-demo.json").read_text())
    for task in curriculum["sequences"][0]["tasks"]:
        mine = [p for p in firsts if f"Issue: {task['metadata']['instance_id']}\n" in p]
        added = [line[1:] for line in task["evaluation"]["patch"].splitlines()
                 if line.startswith("+") and not line.startswith("+++") and len(line.strip()) > 20]
        assert mine and not any(a in p for a in added for p in mine)
        assert not any(t.split("::")[-1] in p for t in task["evaluation"]["FAIL_TO_PASS"] for p in mine)
