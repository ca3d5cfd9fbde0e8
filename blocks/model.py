"""``ModelBlock``: a model endpoint saved in Prefect, with the client that uses it.

The block's fields are ``ModelConfig``'s (endpoint, sampling, faults, limits) plus an
optional ``api_key`` kept as a Prefect secret. ``.config()`` returns the ``ModelConfig``
(without the key: that is what runs store), ``.chat_model()`` the client, which reads the
key from the block at call time::

    ModelBlock(provider="openai-compatible", model="qwen2.5-coder",
               base_url="http://127.0.0.1:8000/v1").save("local-qwen")
    LLMProgrammer(ModelBlock.load("local-qwen").chat_model())

Importing this module registers nothing: ``prefect block register -m evoci.blocks.model``
(or ``ModelBlock.register_type_and_schema()``) does, against a running server.
"""

from __future__ import annotations

from pydantic import ConfigDict, SecretStr

from evoci.agents.llm.client import ChatModel, make_chat_model
from evoci.agents.llm.config import ModelConfig
from prefect.blocks.core import Block


class ModelBlock(Block, ModelConfig):
    """An LLM endpoint for evoci's agents: provider, model, base URL, sampling, limits and API key."""

    _block_type_name = "evoci Model"
    _block_type_slug = "evoci-model"
    _description = "An LLM endpoint (OpenAI, Anthropic or OpenAI-compatible) for evoci's architect and programmer."

    model_config = ConfigDict(frozen=False)

    api_key: SecretStr | None = None
    """The API key. None = read it from ``api_key_env`` or the ``api_key_secret`` block."""

    def config(self) -> ModelConfig:
        """The model config this block holds (the API key left out)."""
        return ModelConfig(**{name: getattr(self, name) for name in ModelConfig.model_fields})

    def chat_model(self) -> ChatModel:
        """The client for this endpoint; the key is read when a call is made."""
        key = (lambda: self.api_key.get_secret_value()) if self.api_key is not None else None
        return make_chat_model(self.config(), api_key=key)


__all__ = ["ModelBlock"]
