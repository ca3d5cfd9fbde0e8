"""ModelBlock: configuration and the client that uses it, registered without a server."""

from __future__ import annotations

from evoci.agents.base import AgentContext, AgentStatus
from evoci.agents.llm import LLMProgrammer, ModelConfig
from evoci.agents.scripted import text
from evoci.blocks.model import ModelBlock

BLOCK_KEY = "sk-block-key-7d2a"


def test_the_block_mirrors_model_config_and_keeps_the_key_secret() -> None:
    assert set(ModelBlock.model_fields) == set(ModelConfig.model_fields) | {"api_key"}
    block = ModelBlock(provider="anthropic", model="claude-haiku-4-5", api_key=BLOCK_KEY, max_steps=5)
    assert block.config() == ModelConfig(provider="anthropic", model="claude-haiku-4-5", max_steps=5)
    assert BLOCK_KEY not in repr(block) and BLOCK_KEY not in repr(block.config())
    schema = ModelBlock._to_block_schema()
    assert ModelBlock.get_block_type_slug() == "evoci-model" and "api_key" in schema.fields["properties"]


def test_the_blocks_client_uses_the_blocks_key(serve, protocol, ctx: AgentContext, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    server = serve([text("ok")])
    block = ModelBlock(provider=protocol, model="m", base_url=server.base_url(protocol), api_key=BLOCK_KEY)
    assert LLMProgrammer(block.chat_model()).run(ctx).status is AgentStatus.OK
    assert any(BLOCK_KEY in value for value in server.requests[0].headers.values())
