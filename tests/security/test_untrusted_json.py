"""A model that answers with JSON nested too deeply for Python, through the real flow.

``json.loads`` raises ``RecursionError`` (not a decode error) on ~100,000 nested lists. Where evoci
read a model's tool arguments with it, that escaped the agent loop: the programmer node failed as
if the harness had, was retried, and the task ended unscored, an outcome the agent chose. Now the
arguments go back to the model as an error, like any malformed call, and the task is scored.
"""

from __future__ import annotations

import pytest

from evoci.agents.scripted import ScriptedLLMServer, text, tool_call
from evoci.swe_ci.scripted_demo import DEMO_KEY_ENV, demo_agent_config, demo_script
from evoci.domain import RunConfig
from evoci.flows.evolve import evolve
from evoci.swe_ci.demo import demo_task
from tests.flows.helpers import query

pytestmark = pytest.mark.usefixtures("prefect_server")

DEEP = "[" * 100_000 + "]" * 100_000


def test_tool_arguments_nested_too_deeply_are_the_agents_outcome_and_the_task_is_scored(tmp_path, monkeypatch):
    monkeypatch.setenv(DEMO_KEY_ENV, "sk-evoci-test-key")
    solver, sent = demo_script(), []

    def script(wire: str, request: dict):
        if "You are a senior software architect" in str(request):
            return solver(wire, request)
        sent.append(request)
        if len(sent) == 1:  # the programmer's first call: arguments too deep to read
            return tool_call("read_file", DEEP)
        return text("I stop here.")  # what it was told is checked below

    home = tmp_path / "home"
    with ScriptedLLMServer(script) as server:
        agent = demo_agent_config(server, "openai")
        summary = evolve(demo_task(tmp_path / "demo"), RunConfig(max_iterations=1, architect=agent, programmer=agent),
                         home=str(home))
    db = home / "evoci.duckdb"
    assert len(sent) == 2 and "nested too deeply to read" in str(sent[1])  # told, as for any malformed call
    assert summary.status == "done"
    assert query(db, "select count(*) from failures") == [(0,)]  # nothing taken for the harness's fault
    assert query(db, "select programmer_status from iterations where iteration = 1") == [("ok",)]
    [(evoscore,)] = query(db, "select evoscore from evoscore(gamma := 1.0)")
    assert evoscore is not None
