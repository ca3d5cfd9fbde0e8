"""A programmer behind the model gateway naming a model it was not given, through the real SWE-CI flow.

The request's model is the agent's to write. A model the upstream does not know is answered 404,
which the gateway took for the user's bad configuration: the task ended ``input_error``, unscored,
and the run started no further task. Now such a call is the agent's own failed call: the task is
scored and the run goes on; a 404 for the model the attempt was configured with still stops it.
"""

from __future__ import annotations

import pytest

from evoci.agents.scripted import ScriptedLLMServer, rejected, text
from evoci.domain import AgentConfig, RunConfig, SandboxConfig
from evoci.flows.evolve import evolve
from evoci.swe_ci.demo import demo_task
from tests.flows.helpers import query

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

HOSTILE = """
import json, os, urllib.request
def call(model):
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", method="POST",
        data=json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}]}).encode(),
        headers={"content-type": "application/json", "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    try:
        urllib.request.urlopen(request, timeout=60).read()
    except Exception as exc:
        print(model, exc)
call("gpt-4.1")
call("no-such-model")
"""


def test_a_model_the_programmer_names_that_does_not_exist_is_its_own_failed_call_and_the_task_is_scored(
        tmp_path, monkeypatch):
    monkeypatch.setenv("EVOCI_TEST_UPSTREAM_KEY", "sk-upstream-test")

    def answer(protocol, body):
        return text("ok", usage={"input_tokens": 10, "output_tokens": 2}) if body.get("model") == "gpt-4.1" \
            else rejected(404)  # what OpenAI and Anthropic answer for a model they do not have

    with ScriptedLLMServer(answer) as server:
        gateway = {"provider": "openai-compatible", "base_url": server.base_url("openai"),
                   "api_key_env": "EVOCI_TEST_UPSTREAM_KEY", "retry_backoff_s": 0.01}
        program = HOSTILE.replace("{", "{{").replace("}", "}}")  # command templates are str.format()ted
        programmer = AgentConfig(kind="command", model="gpt-4.1", options={
            "command": ["python", "-c", program], "timeout_s": 300, "gateway": gateway})
        config = RunConfig(run_id="chosen-model", max_iterations=1, programmer=programmer,
                           sandbox=SandboxConfig(kind="local"), node_retries=0)
        home = tmp_path / "home"
        summary = evolve(demo_task(tmp_path / "demo"), config, home=str(home))
        assert [r.body.get("model") for r in server.requests] == ["gpt-4.1", "no-such-model"]
    assert (summary.status, summary.stops_run) == ("done", False)
    db = home / "evoci.duckdb"
    assert query(db, "select iteration, status from iterations order by iteration") == [(0, "ok"), (1, "ok")]
    assert query(db, "select count(*) from failures") == [(0,)]
    assert query(db, "select count(*), count(error) from agent_calls where role = 'programmer'") == [(2, 1)]


# The agent's own model, a request the upstream rejects for another reason: OpenAI answers 404 to a
# Responses call whose previous_response_id it does not know. The gateway took it for the user's
# configuration (the task unscored, the run stopped). It now asks the upstream whether the model is
# there (GET /v1/models/<id>); it is, so the call is the agent's own failed call.
PROVOKED = """
import json, os, urllib.request
def call(body):
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/responses", method="POST",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    try:
        urllib.request.urlopen(request, timeout=60).read()
    except Exception as exc:
        print(exc)
call({"model": "gpt-4.1", "input": "hi", "previous_response_id": "resp_does_not_exist"})
call({"model": "gpt-4.1", "input": "hi"})
"""


@pytest.mark.parametrize("exists", [True, False], ids=["model-exists", "model-unknown"])
def test_a_404_the_agent_provokes_for_its_own_model_is_its_failed_call_and_a_missing_model_still_stops(
        tmp_path, monkeypatch, exists):
    monkeypatch.setenv("EVOCI_TEST_UPSTREAM_KEY", "sk-upstream-test")

    def answer(protocol, body):
        if body.get("previous_response_id") or not exists:
            return rejected(404)
        return text("ok", usage={"input_tokens": 10, "output_tokens": 2})

    with ScriptedLLMServer(answer, models={"gpt-4.1"} if exists else set()) as server:
        gateway = {"provider": "openai-compatible", "base_url": server.base_url("openai"),
                   "api_key_env": "EVOCI_TEST_UPSTREAM_KEY", "retry_backoff_s": 0.01}
        program = PROVOKED.replace("{", "{{").replace("}", "}}")
        programmer = AgentConfig(kind="command", model="gpt-4.1", options={
            "command": ["python", "-c", program], "timeout_s": 300, "gateway": gateway})
        config = RunConfig(run_id=f"provoked-404-{exists}", max_iterations=1, programmer=programmer,
                           sandbox=SandboxConfig(kind="local"), node_retries=0)
        summary = evolve(demo_task(tmp_path / "demo"), config, home=str(tmp_path / "home"))
    db = tmp_path / "home" / "evoci.duckdb"
    if exists:
        assert (summary.status, summary.stops_run) == ("done", False)
        assert query(db, "select count(*) from failures") == [(0,)]
    else:  # the model the user configured is not there: the user's configuration, unscored, the run stops
        assert summary.stops_run and query(db, "select count(*) from failures") != [(0,)]
