"""``ModelConfig``: which model an LLM agent talks to, how, and how much it may spend.

For ``AgentConfig(kind="llm", model=..., options={...})`` the options are this model's
fields; ``ModelConfig.from_agent_config`` builds it and names any option it does not know.
API keys are never part of the config (it is stored with the run): the config names the
environment variable or the Prefect Secret block that holds the key, read at call time.
"""

from __future__ import annotations

import difflib
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evoci.agents.llm.prices import Price
from evoci.domain import AgentConfig
from evoci.errors import InputError

M = TypeVar("M", bound=BaseModel)
Provider = Literal["openai", "anthropic", "openai-compatible"]

DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "openai-compatible": "OPENAI_API_KEY"}


class ModelConfig(BaseModel):
    """A model endpoint, its sampling settings and the limits of one agent attempt."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    # -- endpoint ------------------------------------------------------------------------
    provider: Provider = "openai"
    """'openai' (Chat Completions), 'anthropic' (Messages API), or 'openai-compatible'
    (any server speaking Chat Completions: vLLM, Ollama, llama.cpp server, LiteLLM)."""
    model: str
    """The model name sent to the API, e.g. 'gpt-4.1' or 'claude-sonnet-4-5'."""
    base_url: str | None = None
    """API root, e.g. 'http://127.0.0.1:8000/v1' for an OpenAI-compatible server, or the
    Anthropic root without '/v1'. Required for 'openai-compatible'; None = the provider's."""
    api_key_env: str | None = None
    """Environment variable holding the API key; None = OPENAI_API_KEY or ANTHROPIC_API_KEY.
    For 'openai-compatible' a missing key is allowed (local servers need none)."""
    api_key_secret: str | None = None
    """Name of a Prefect Secret block holding the API key; used instead of ``api_key_env``."""

    # -- sampling ------------------------------------------------------------------------
    temperature: float | None = Field(None, ge=0)
    """Sampling temperature; None = the provider's default."""
    top_p: float | None = Field(None, gt=0, le=1)
    """Nucleus sampling; None = the provider's default."""
    max_tokens: int = Field(8192, gt=0)
    """The most output tokens of one reply."""
    prompt_cache: bool = True
    """Anthropic only: mark the conversation for prompt caching (cheaper repeated input)."""

    # -- faults --------------------------------------------------------------------------
    timeout_s: float = Field(300.0, gt=0)
    """Give up on one HTTP request after this many seconds (then it is retried)."""
    max_retries: int = Field(4, ge=0)
    """Retries of one call after a rate limit (429), a server error (5xx), a timeout or a
    lost connection. Every failed attempt is recorded as a model call with its error."""
    retry_backoff_s: float = Field(2.0, ge=0)
    """First wait before a retry without a Retry-After header; doubles on each retry."""
    max_retry_wait_s: float = Field(120.0, ge=0)
    """The longest wait before one retry, even when Retry-After asks for more."""

    # -- limits of one attempt (the architect's re-asks count against the same limits) ---
    max_steps: int = Field(60, gt=0)
    """The most model turns in one attempt (the retries of a turn count once)."""
    max_input_tokens: int | None = Field(None, gt=0)
    """Token budget: total input tokens (cached included) of one attempt; None = no limit."""
    max_output_tokens: int | None = Field(None, gt=0)
    """Token budget: total output tokens of one attempt; None = no limit."""
    max_cost_usd: float | None = Field(None, gt=0)
    """Cost budget of one attempt in USD; None = no limit."""
    max_seconds: float | None = Field(3600.0, gt=0)
    """Wall-clock limit of one attempt; None = no limit. Checked between model calls."""
    price: Price | None = None
    """USD per 1M tokens for this model; overrides the built-in price table."""

    # -- role ----------------------------------------------------------------------------
    max_reasks: int = Field(2, ge=0)
    """Architect only: how often an invalid requirement.xml is sent back with its errors."""

    @model_validator(mode="after")
    def _base_url_when_compatible(self) -> "ModelConfig":
        if self.provider == "openai-compatible" and not self.base_url:
            raise ValueError("provider 'openai-compatible' needs base_url, e.g. 'http://127.0.0.1:8000/v1'")
        return self

    @property
    def key_env(self) -> str:
        """The environment variable the API key is read from."""
        return self.api_key_env or DEFAULT_KEY_ENV[self.provider]

    @classmethod
    def from_agent_config(cls, cfg: AgentConfig) -> "ModelConfig":
        """The model config of an ``llm`` agent: ``cfg.model`` plus ``cfg.options``."""
        options: dict[str, Any] = dict(cfg.options)
        if cfg.model and options.get("model", cfg.model) != cfg.model:
            raise InputError(
                f"the llm agent names two models: model={cfg.model!r} and options.model={options['model']!r}"
            )
        if cfg.model:
            options["model"] = cfg.model
        if not options.get("model"):
            raise InputError("an llm agent needs a model name: set AgentConfig.model, e.g. 'gpt-4.1'")
        return parse_options(cls, options, "llm")


def parse_options(model: type[M], options: dict[str, Any], kind: str) -> M:
    """``model(**options)``, with errors that name unknown keys and bad values (``InputError``)."""
    known = set(model.model_fields)
    unknown = sorted(set(options) - known)
    if unknown:
        hints = [f"{k!r}" + _did_you_mean(k, known) for k in unknown]
        raise InputError(
            f"unknown option {', '.join(hints)} of a kind={kind!r} agent — choose from: {', '.join(sorted(known))}"
        )
    try:
        return model(**options)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'options'}: {e['msg']}" for e in exc.errors())
        raise InputError(f"invalid options of a kind={kind!r} agent: {problems}") from None


def _did_you_mean(word: str, choices: set[str]) -> str:
    close = difflib.get_close_matches(word, sorted(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


__all__ = ["DEFAULT_KEY_ENV", "ModelConfig", "Provider", "parse_options"]
