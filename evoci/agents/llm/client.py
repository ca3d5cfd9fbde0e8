"""``ChatModel``: one interface over the OpenAI and Anthropic SDKs.

``complete(messages, tools)`` makes **one** API call and returns a ``ModelTurn`` (text,
tool calls, finish reason and its ``ModelCall`` accounting) or raises ``ModelError``
(which also carries the failed call's ``ModelCall``). ``complete_with_retries`` retries
rate limits (honouring ``Retry-After``), server errors, timeouts and lost connections a
bounded number of times, recording every attempt. The SDKs' own retries are switched off
so that no attempt goes unrecorded.

Messages use one neutral shape, which is also the stored trajectory::

    {"role": "system" | "user", "content": str}
    {"role": "assistant", "content": str, "tool_calls": [{"id", "name", "arguments"}]}
    {"role": "tool", "tool_call_id": str, "name": str, "content": str, "is_error": bool}
    {"role": "note", "content": str}          # for people reading; never sent

API keys are read at call time (environment variable or Prefect Secret block), passed to
the SDK and nothing else: never logged, stored, or put into an error message.
"""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from evoci.agents.base import ModelCall
from evoci.agents.llm.config import ModelConfig
from evoci.agents.llm.prices import cost_usd, price_for
from evoci.agents.llm.tools import Tool, ToolCall
from evoci.errors import InfrastructureError, InputError

KeySource = Callable[[], "str | None"]
ERROR_CHARS = 500  # longest error text kept in a ModelCall
T = TypeVar("T")


@dataclass(frozen=True)
class ModelTurn:
    """One model reply."""

    text: str
    tool_calls: list[ToolCall]
    finish_reason: str | None
    call: ModelCall
    refusal: str | None = None  # set when the model declined to answer


class ModelError(Exception):
    """A model call that failed. ``retryable`` errors are worth another attempt."""

    retryable = False

    def __init__(self, message: str, call: ModelCall, *, retry_after: float | None = None):
        super().__init__(message)
        self.call = call
        self.retry_after = retry_after


class TransientModelError(ModelError):
    """Rate limit, server error, timeout or lost connection."""

    retryable = True


class RejectedRequest(ModelError):
    """HTTP 401/403/404: bad key, no access, unknown model or endpoint. The same request can never succeed."""


REJECTED_STATUSES = (401, 403, 404)


class ContextOverflow(ModelError):
    """The conversation no longer fits the model's context window."""


def read_reply(parse: Callable[[], T], acct: "Accounting", started: float) -> T:
    """``parse()``, the SDK reading a reply; a reply it cannot read is a ``ModelError``.

    The SDKs read the reply's JSON with ``json.loads``: a tool input nested deeper than Python's
    recursion limit (an Anthropic ``tool_use`` block carries the model's JSON as is) raises
    ``RecursionError``, a number of more than 4,300 digits ``ValueError``. Both are what the model
    wrote, so the agent's outcome (``model_error``), as a reply without choices is, never an
    exception the harness takes for its own.
    """
    try:
        return parse()
    except (RecursionError, ValueError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(":")[0]
        text = f"the reply could not be read ({why})"
        raise ModelError(text, acct.call(started, error=text)) from None


class ChatModel(Protocol):
    """A chat model with tool calling."""

    config: ModelConfig

    def complete(self, messages: list[dict[str, Any]], tools: list[Tool]) -> ModelTurn:
        """Make one API call; raise ``ModelError`` when it fails."""
        ...


@dataclass
class Accounting:
    """Turns usage numbers into a ``ModelCall`` (tokens, cached tokens, cost)."""

    config: ModelConfig
    api_key: str | None = field(default=None, repr=False)

    def call(
        self,
        started: float,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cached_tokens: int = 0,
        cache_write_tokens: int = 0,
        finish_reason: str | None = None,
        error: str | None = None,
    ) -> ModelCall:
        """The record of one call that began at ``started`` (``time.monotonic()``)."""
        price = price_for(self.config.model, self.config.price)
        tokens = {"input_tokens": input_tokens, "output_tokens": output_tokens, "cached_tokens": cached_tokens}
        cost = cost_usd(price, **tokens, cache_write_tokens=cache_write_tokens)
        return ModelCall(
            model=self.config.model,
            provider=self.config.provider,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cached_tokens=cached_tokens,
            cost_usd=cost,
            latency_s=time.monotonic() - started,
            finish_reason=finish_reason,
            error=self.scrub(error)[:ERROR_CHARS] if error else None,
        )

    def scrub(self, text: str) -> str:
        """``text`` with the API key blanked out (error bodies can echo it)."""
        return text.replace(self.api_key, "***") if self.api_key else text


def complete_with_retries(
    model: ChatModel,
    messages: list[dict[str, Any]],
    tools: list[Tool],
    record: Callable[[ModelCall], None],
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> ModelTurn:
    """``model.complete`` retried on transient errors; ``record`` sees every attempt."""
    cfg = model.config
    for attempt in range(cfg.max_retries + 1):
        try:
            turn = model.complete(messages, tools)
        except ModelError as exc:
            record(exc.call)
            if not exc.retryable or attempt == cfg.max_retries:
                raise
            wait = exc.retry_after if exc.retry_after is not None else cfg.retry_backoff_s * 2**attempt
            sleep(min(wait, cfg.max_retry_wait_s))
            continue
        record(turn.call)
        return turn
    raise AssertionError("unreachable")  # pragma: no cover


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait, from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(float(value) * scale, 0.0)
            except ValueError:
                pass
    try:
        when = email.utils.parsedate_to_datetime(headers.get("retry-after") or "")
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def api_key_source(config: ModelConfig, *, required: bool) -> KeySource:
    """A function reading the API key when called: Prefect Secret block or environment variable."""

    def read() -> str | None:
        if config.api_key_secret:
            return _secret(config.api_key_secret)
        key = os.environ.get(config.key_env)
        if not key and required:
            raise InputError(f"no API key for {config.provider}: set the environment variable {config.key_env} "
                             "(or the option api_key_env / api_key_secret)")  # fmt: skip
        return key or None

    return read


def _secret(name: str) -> str:
    from prefect.blocks.system import Secret

    try:
        block = Secret.load(name)
    except ValueError as exc:
        raise InputError(f"no Prefect Secret block named {name!r}: create it or fix api_key_secret ({exc})") from None
    except Exception as exc:  # the Prefect API could not be reached
        raise InfrastructureError(f"could not load the Prefect Secret block {name!r}: {type(exc).__name__}") from None
    return str(block.get())


def make_chat_model(config: ModelConfig, api_key: KeySource | None = None) -> ChatModel:
    """The client for ``config.provider``; ``api_key`` overrides where the key is read from."""
    if config.provider == "anthropic":
        from evoci.agents.llm.anthropic_chat import AnthropicChat

        return AnthropicChat(config, api_key or api_key_source(config, required=True))
    from evoci.agents.llm.openai_chat import OpenAIChat

    required = config.provider == "openai"
    return OpenAIChat(config, api_key or api_key_source(config, required=required))


__all__ = [
    "Accounting",
    "ChatModel",
    "ContextOverflow",
    "KeySource",
    "ModelError",
    "ModelTurn",
    "REJECTED_STATUSES",
    "RejectedRequest",
    "TransientModelError",
    "api_key_source",
    "complete_with_retries",
    "make_chat_model",
    "read_reply",
    "retry_after_s",
]
