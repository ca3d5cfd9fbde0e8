"""What a model call costs: USD per 1M tokens, by model name.

The table holds list prices of common OpenAI and Anthropic models as their providers
published them (checked 2025); prices change, so ``ModelConfig.price`` overrides the
table for a run. A model the table does not know costs 0 and the agent records a note
saying so (never a crash). Names match exactly or by the longest known prefix, so dated
snapshots ('gpt-4o-2024-08-06', 'claude-sonnet-4-5-20250929') find their family, and a
router prefix ('openai/gpt-4o') is ignored.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Price(BaseModel):
    """USD per 1M tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    input: float = Field(ge=0)
    """Uncached input tokens."""
    output: float = Field(ge=0)
    """Output tokens (reasoning tokens included)."""
    cached_input: float | None = Field(None, ge=0)
    """Input tokens read from the prompt cache; None = the input price."""
    cache_write: float | None = Field(None, ge=0)
    """Input tokens written to the prompt cache (Anthropic); None = the input price."""


def _p(input: float, cached: float, output: float, write: float | None = None) -> Price:
    return Price(input=input, cached_input=cached, output=output, cache_write=write)


PRICES: dict[str, Price] = {
    # OpenAI: cached input is billed at the cached rate; writes cost nothing extra.
    "gpt-4o": _p(2.50, 1.25, 10.00),
    "gpt-4o-mini": _p(0.15, 0.075, 0.60),
    "gpt-4.1": _p(2.00, 0.50, 8.00),
    "gpt-4.1-mini": _p(0.40, 0.10, 1.60),
    "gpt-4.1-nano": _p(0.10, 0.025, 0.40),
    "gpt-5": _p(1.25, 0.125, 10.00),
    "gpt-5-mini": _p(0.25, 0.025, 2.00),
    "gpt-5-nano": _p(0.05, 0.005, 0.40),
    "o1": _p(15.00, 7.50, 60.00),
    "o3": _p(2.00, 0.50, 8.00),
    "o3-mini": _p(1.10, 0.55, 4.40),
    "o4-mini": _p(1.10, 0.275, 4.40),
    # Anthropic: cache reads at 0.1x input, 5-minute cache writes at 1.25x input.
    "claude-opus-4": _p(15.00, 1.50, 75.00, 18.75),
    "claude-opus-4-1": _p(15.00, 1.50, 75.00, 18.75),
    "claude-opus-4-5": _p(5.00, 0.50, 25.00, 6.25),
    "claude-sonnet-4": _p(3.00, 0.30, 15.00, 3.75),
    "claude-sonnet-4-5": _p(3.00, 0.30, 15.00, 3.75),
    "claude-3-7-sonnet": _p(3.00, 0.30, 15.00, 3.75),
    "claude-3-5-sonnet": _p(3.00, 0.30, 15.00, 3.75),
    "claude-haiku-4-5": _p(1.00, 0.10, 5.00, 1.25),
    "claude-3-5-haiku": _p(0.80, 0.08, 4.00, 1.00),
}


def price_for(model: str, override: Price | None = None) -> Price | None:
    """The price of ``model``: the override, an exact or longest-prefix table entry, or None."""
    if override is not None:
        return override
    name = model.rsplit("/", 1)[-1].lower()
    if name in PRICES:
        return PRICES[name]
    prefixes = [known for known in PRICES if name.startswith(known + "-")]
    return PRICES[max(prefixes, key=len)] if prefixes else None


def cost_usd(
    price: Price | None, *, input_tokens: int, output_tokens: int, cached_tokens: int = 0, cache_write_tokens: int = 0
) -> float:
    """USD of one call. ``input_tokens`` counts every input token, cached and cache-written included."""
    if price is None:
        return 0.0
    cached_rate = price.input if price.cached_input is None else price.cached_input
    write_rate = price.input if price.cache_write is None else price.cache_write
    plain = max(input_tokens - cached_tokens - cache_write_tokens, 0)
    total = plain * price.input + cached_tokens * cached_rate + cache_write_tokens * write_rate
    return (total + output_tokens * price.output) / 1_000_000


__all__ = ["PRICES", "Price", "cost_usd", "price_for"]
