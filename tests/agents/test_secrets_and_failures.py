"""API keys stay out of every record and out of the sandbox; infrastructure failures raise."""

from __future__ import annotations

import json

import pytest

from evoci.agents.base import AgentContext, AgentStatus
from evoci.agents.llm import LLMProgrammer, make_chat_model
from evoci.agents.scripted import text, tool_call
from evoci.errors import InputError, ProviderRejected, SandboxError

from .conftest import API_KEY, config_for


def test_the_api_key_goes_only_into_the_auth_header(serve, protocol, ctx: AgentContext) -> None:
    server = serve([
        tool_call("write_file", {"path": "src/new.py", "content": "X = 1\n"}),
        {"error": "invalid", "status": 401, "message": f"Incorrect API key provided: {API_KEY}."},
    ])  # fmt: skip
    with pytest.raises(ProviderRejected) as raised:
        LLMProgrammer(make_chat_model(config_for(server, protocol))).run(ctx)
    outcome = raised.value.outcome
    assert API_KEY not in str(raised.value)
    for request in server.requests:
        carrying = {name.lower() for name, value in request.headers.items() if API_KEY in value}
        assert len(carrying) == 1 and carrying <= {"authorization", "x-api-key"} and API_KEY not in request.raw
    assert "***" in outcome.calls[-1].error  # the echoed key was blanked out
    records = repr(outcome.calls) + json.dumps(outcome.trajectory) + outcome.message
    assert API_KEY not in records
    env = ctx.sandbox.exec(["env"], timeout=10)
    assert env.ok and API_KEY not in env.stdout
    assert not any(API_KEY in p.read_text(errors="replace") for p in ctx.sandbox.workspace.rglob("*") if p.is_file())


def test_a_missing_api_key_is_a_configuration_error(serve, protocol, ctx: AgentContext, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    server = serve([text("never")])
    with pytest.raises(InputError, match="no API key for .*: set the environment variable"):
        LLMProgrammer(make_chat_model(config_for(server, protocol))).run(ctx)
    assert server.requests == []


def test_a_local_openai_compatible_server_needs_no_key(serve, ctx: AgentContext, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    server = serve([text("ok")])
    outcome = LLMProgrammer(make_chat_model(config_for(server, "openai", provider="openai-compatible", model="qwen"))).run(ctx)
    assert outcome.status is AgentStatus.OK
    assert "max_tokens" in server.requests[0].body  # compatible servers get the classic parameter name


def test_a_failing_sandbox_raises_with_the_calls_made_so_far(serve, protocol, ctx: AgentContext) -> None:
    class Broken:
        workspace = ctx.sandbox.workspace

        def read_file(self, path: str) -> bytes:
            raise SandboxError("the container is gone")

    ctx.sandbox = Broken()  # type: ignore[assignment]
    ctx.requirement = "<requirements/>"
    server = serve([tool_call("read_file", {"path": "src/calc.py"})])
    with pytest.raises(SandboxError) as caught:
        LLMProgrammer(make_chat_model(config_for(server, protocol))).run(ctx)
    partial = caught.value.outcome
    assert len(partial.calls) == 1 and partial.trajectory[-1]["role"] == "assistant"
