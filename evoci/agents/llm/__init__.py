"""LLM agents: a chat model with tools plays the SWE-CI architect or programmer.

    config.py          ModelConfig: endpoint, sampling, faults, limits (AgentConfig.options)
    prices.py          USD per 1M tokens by model name
    client.py          ChatModel interface, ModelError family, retries, API-key sources
    openai_chat.py     ChatModel on the openai SDK (Chat Completions)
    anthropic_chat.py  ChatModel on the anthropic SDK (Messages API)
    tools.py           list_dir, read_file, search_text, write_file, replace_text
    loop.py            query → act until the model answers in words or a limit ends it
    prompts.py         the SWE-CI system prompts, adapted to the workspace
    roles.py           LLMArchitect, LLMProgrammer
"""

from evoci.agents.llm.client import ChatModel, ModelTurn, make_chat_model
from evoci.agents.llm.config import ModelConfig
from evoci.agents.llm.prices import Price
from evoci.agents.llm.roles import LLMArchitect, LLMProgrammer, make_llm_agent

__all__ = [
    "ChatModel",
    "LLMArchitect",
    "LLMProgrammer",
    "ModelConfig",
    "ModelTurn",
    "Price",
    "make_llm_agent",
    "make_chat_model",
]
