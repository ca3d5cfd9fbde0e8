"""A model block saved in Prefect with its API key, used by an agent; the key is never on record."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from evoci.agents import Role, make_agent
from evoci.agents.scripted import ScriptedLLMServer, text
from evoci.blocks.model import ModelBlock
from evoci.domain import AgentConfig

pytestmark = pytest.mark.usefixtures("prefect_server")

SECRET = "sk-block-SECRET-0042"


def test_an_agent_built_from_a_saved_block_calls_its_endpoint_with_the_blocks_key(ctx, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")  # the key must come from the block
    with ScriptedLLMServer([text("nothing to do")]) as server:
        ModelBlock(provider="openai-compatible", model="scripted", base_url=server.base_url("openai"),
                   api_key=SecretStr(SECRET), max_retries=0).save("test-model", overwrite=True)
        agent = make_agent(Role.PROGRAMMER, AgentConfig(kind="llm", options={"model_block": "test-model"}))
        ctx.requirement = "<requirements/>"
        outcome = agent.run(ctx)
        [request] = server.requests
    assert any(SECRET in value for value in request.headers.values())
    assert [c.model for c in outcome.calls] == ["scripted"]
    assert SECRET not in repr(outcome)
