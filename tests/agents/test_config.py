"""ModelConfig from an AgentConfig; prices; the llm agent factory."""

from __future__ import annotations

import pytest

from evoci.agents.base import Role
from evoci.agents.llm import LLMArchitect, LLMProgrammer, ModelConfig, make_llm_agent
from evoci.agents.llm.prices import Price, cost_usd, price_for
from evoci.domain import AgentConfig
from evoci.errors import InputError


def test_options_become_the_model_config() -> None:
    cfg = AgentConfig(kind="llm", model="gpt-4.1", options={"temperature": 0.2, "max_steps": 7, "price": {"input": 1, "output": 2}})
    config = ModelConfig.from_agent_config(cfg)
    assert (config.model, config.temperature, config.max_steps, config.price) == ("gpt-4.1", 0.2, 7, Price(input=1, output=2))
    assert config.key_env == "OPENAI_API_KEY"


def test_an_unknown_option_is_named_with_a_suggestion() -> None:
    with pytest.raises(InputError, match=r"unknown option 'temprature' \(did you mean 'temperature'\?\).*choose from: .*max_steps"):
        ModelConfig.from_agent_config(AgentConfig(kind="llm", model="gpt-4o", options={"temprature": 0.1}))


@pytest.mark.parametrize(
    ("cfg", "error"),
    [
        (AgentConfig(kind="llm", options={}), "needs a model name"),
        (AgentConfig(kind="llm", model="a", options={"model": "b"}), "two models"),
        (AgentConfig(kind="llm", model="m", options={"provider": "openai-compatible"}), "needs base_url"),
        (AgentConfig(kind="llm", model="m", options={"max_steps": 0}), "max_steps"),
        (AgentConfig(kind="llm", model="m", options={"provider": "gemini"}), "provider"),
    ],
)
def test_bad_options_are_input_errors(cfg: AgentConfig, error: str) -> None:
    with pytest.raises(InputError, match=error):
        ModelConfig.from_agent_config(cfg)


def test_the_factory_builds_both_roles() -> None:
    cfg = AgentConfig(kind="llm", model="claude-sonnet-4-5", options={"provider": "anthropic"})
    architect, programmer = make_llm_agent(Role.ARCHITECT, cfg), make_llm_agent("programmer", cfg)
    assert isinstance(architect, LLMArchitect) and architect.role is Role.ARCHITECT
    assert isinstance(programmer, LLMProgrammer) and programmer.name == "llm:anthropic/claude-sonnet-4-5"


@pytest.mark.parametrize(
    ("model", "family"),
    [("gpt-4o-2024-08-06", "gpt-4o"), ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"), ("openai/gpt-4.1-mini", "gpt-4.1-mini"),
     ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"), ("claude-opus-4-1-20250805", "claude-opus-4-1")],
)
def test_dated_and_routed_names_find_their_price(model: str, family: str) -> None:
    assert price_for(model) == price_for(family) is not None


def test_an_unknown_model_has_no_price_and_an_override_wins() -> None:
    assert price_for("my-local-llama") is None
    assert cost_usd(None, input_tokens=10**6, output_tokens=10**6) == 0
    assert price_for("gpt-4o", Price(input=9, output=9)) == Price(input=9, output=9)


def test_cost_bills_cached_and_cache_written_tokens_at_their_rates() -> None:
    price = Price(input=3, cached_input=0.3, cache_write=3.75, output=15)
    cost = cost_usd(price, input_tokens=10_000, cached_tokens=4_000, cache_write_tokens=2_000, output_tokens=1_000)
    assert cost == pytest.approx((4_000 * 3 + 4_000 * 0.3 + 2_000 * 3.75 + 1_000 * 15) / 1e6)
