"""``ChatModel`` on the official ``openai`` SDK: Chat Completions with ``tools``.

Serves ``openai`` and ``openai-compatible`` endpoints (vLLM, Ollama, llama.cpp server,
LiteLLM), which differ only in ``base_url`` and in the name of the output-token cap.
SDK errors are translated here, at the boundary, into ``ModelError`` subclasses.
"""

from __future__ import annotations

import time
from typing import Any

import openai

from evoci.agents.llm.client import (
    Accounting,
    ContextOverflow,
    KeySource,
    ModelError,
    ModelTurn,
    REJECTED_STATUSES,
    RejectedRequest,
    TransientModelError,
    read_reply,
    retry_after_s,
)
from evoci.agents.llm.config import ModelConfig
from evoci.agents.llm.tools import Tool, ToolCall

# Local servers accept any key; the SDK insists on a non-empty one.
NO_KEY = "not-needed"


class OpenAIChat:
    """Chat Completions with tool calling."""

    def __init__(self, config: ModelConfig, api_key: KeySource):
        self.config = config
        self._api_key = api_key

    def complete(self, messages: list[dict[str, Any]], tools: list[Tool]) -> ModelTurn:
        cfg = self.config
        key = self._api_key()
        acct = Accounting(cfg, key)
        request: dict[str, Any] = {"model": cfg.model, "messages": to_openai(messages)}
        request["max_completion_tokens" if cfg.provider == "openai" else "max_tokens"] = cfg.max_tokens
        if tools:
            request["tools"] = [t.openai_schema() for t in tools]
        if cfg.temperature is not None:
            request["temperature"] = cfg.temperature
        if cfg.top_p is not None:
            request["top_p"] = cfg.top_p
        started = time.monotonic()
        client = openai.OpenAI(api_key=key or NO_KEY, base_url=cfg.base_url, timeout=cfg.timeout_s, max_retries=0)
        try:
            with client:
                raw = client.chat.completions.with_raw_response.create(**request)
                response = read_reply(raw.parse, acct, started)
        except openai.APIStatusError as exc:
            raise _status_error(exc, acct, started) from None
        except openai.APITimeoutError:
            raise TransientModelError("timeout", acct.call(started, error=f"timeout after {cfg.timeout_s} s")) from None
        except openai.APIConnectionError as exc:
            raise TransientModelError("connection", acct.call(started, error=f"connection error: {exc}")) from None
        if not response.choices:
            raise ModelError("no choices", acct.call(started, error="the response held no choices"))
        choice, usage = response.choices[0], response.usage
        details = getattr(usage, "prompt_tokens_details", None) if usage else None
        call = acct.call(
            started,
            input_tokens=usage.prompt_tokens if usage else 0,
            output_tokens=usage.completion_tokens if usage else 0,
            cached_tokens=(getattr(details, "cached_tokens", 0) or 0) if details else 0,
            finish_reason=choice.finish_reason,
        )
        message = choice.message
        calls = [
            ToolCall(id=tc.id, name=tc.function.name, arguments=tc.function.arguments or "")
            for tc in message.tool_calls or []
            if getattr(tc, "function", None) is not None
        ]
        refusal = getattr(message, "refusal", None) or (
            "the provider's content filter stopped the reply" if choice.finish_reason == "content_filter" else None
        )
        return ModelTurn(message.content or "", calls, choice.finish_reason, call, refusal)


def _status_error(exc: openai.APIStatusError, acct: Accounting, started: float) -> ModelError:
    body = exc.body if isinstance(exc.body, dict) else {}
    code, message = body.get("code") or body.get("type"), str(body.get("message") or exc.message)
    text = f"HTTP {exc.status_code}" + (f" {code}" if code else "") + f": {message}"
    text = acct.scrub(text)  # error bodies can echo the key
    call = acct.call(started, error=text)
    if code == "context_length_exceeded" or "maximum context length" in message.lower():
        return ContextOverflow(text, call)
    if exc.status_code in REJECTED_STATUSES:
        return RejectedRequest(text, call)
    if exc.status_code in (408, 409, 429) or exc.status_code >= 500:
        return TransientModelError(text, call, retry_after=retry_after_s(exc.response.headers))
    return ModelError(text, call)


def to_openai(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Neutral messages → Chat Completions messages."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] in ("system", "user"):
            out.append({"role": m["role"], "content": m["content"]})
        elif m["role"] == "assistant":
            content = m.get("content") or (None if m.get("tool_calls") else "(no reply)")
            entry: dict[str, Any] = {"role": "assistant", "content": content}
            if m.get("tool_calls"):
                entry["tool_calls"] = [
                    {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                    for c in m["tool_calls"]
                ]
            out.append(entry)
        elif m["role"] == "tool":
            out.append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": m["content"]})
    return out


__all__ = ["OpenAIChat", "to_openai"]
