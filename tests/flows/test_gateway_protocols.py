"""Every protocol's command agent reaches its model through the gateway, and only through it.

SWE-EVO's agent mode and a NITR probe run a ``command`` agent with a ``gateway`` option in the
real flow and the local sandbox: the CLI makes one Chat Completions call (the one address it
has), tries a host port (refused), and the call is in ``agent_calls`` with the server's tokens.
Before the gateway these sandboxes had no network at all, whatever the option said.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from evoci.agents.scripted import ScriptedLLMServer, text
from evoci.domain import AgentConfig, RunConfig
from evoci.flows.nitr import nitr
from evoci.flows.swe_evo import swe_evo
from tests.flows.helpers import query

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

U = {"input_tokens": 321, "output_tokens": 12, "cached_tokens": 0}
# The script travels in an environment variable: command templates are str.format()ted.
CLI = r"""
import json, os, socket, sys, urllib.request
body = json.dumps({"model": "gpt-4.1", "messages": [{"role": "user", "content": "go"}]}).encode()
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", body,
                                 {"content-type": "application/json", "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
said = json.loads(urllib.request.urlopen(request, timeout=60).read())["choices"][0]["message"]["content"]
try:
    socket.create_connection(("127.0.0.1", int(os.environ["HOST_PORT"])), timeout=3)
    host = "reached"
except OSError:
    host = "refused"
print(json.dumps({"said": said, "host": host}))
"""


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ScriptedLLMServer, AgentConfig]]:
    monkeypatch.setenv("PROTOCOL_GATEWAY_KEY", "sk-protocols")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    with ScriptedLLMServer(lambda protocol, body: text("from the model", usage=U)) as server:
        gateway = {"provider": "openai", "base_url": server.base_url("openai"), "api_key_env": "PROTOCOL_GATEWAY_KEY",
                   "max_retries": 0}
        agent = AgentConfig(kind="command", options={
            "command": ["python", "-c", "import os; exec(os.environ['CLI'])"], "gateway": gateway,
            "env": {"CLI": CLI, "HOST_PORT": str(listener.getsockname()[1])}, "timeout_s": 300})
        yield server, agent
    listener.close()


def check(db, run_id: str) -> None:
    calls = query(db, "select provider, input_tokens, output_tokens, error from agent_calls where run_id = ?", [run_id])
    assert calls and set(calls) == {("gateway:openai", 321, 12, None)}
    for (trajectory,) in query(db, "select trajectory from trajectories where run_id = ?", [run_id]):
        step = json.loads(trajectory)[0]
        assert json.loads(step["stdout_tail"]) == {"said": "from the model", "host": "refused"}


def test_swe_evo_agent_mode_reaches_its_model_through_the_gateway(tmp_path, model) -> None:
    server, agent = model
    config = RunConfig(protocol="swe-evo", programmer=agent, test_timeout_s=300, node_retries=0)
    summaries = swe_evo("swe-evo-demo", config, home=str(tmp_path / "home"))
    check(tmp_path / "home" / "evoci.duckdb", summaries[0].run_id)
    assert all(r.headers.get("authorization") == "Bearer sk-protocols" for r in server.requests)


def test_a_nitr_probe_agent_reaches_its_model_through_the_gateway(tmp_path, model) -> None:
    server, agent = model
    config = RunConfig(run_id="nitr-gateway", protocol="nitr", programmer=agent, architect=agent, node_retries=0)
    nitr("builtin", config, select={"id": ["001"]}, home=str(tmp_path / "home"), db=str(tmp_path / "r.duckdb"))
    check(tmp_path / "r.duckdb", "nitr-gateway")
    assert len(server.requests) >= 1
