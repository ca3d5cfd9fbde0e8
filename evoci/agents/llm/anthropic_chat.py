"""``ChatModel`` on the official ``anthropic`` SDK: the Messages API with ``tools``.

The neutral messages become Anthropic's shape: the system prompt moves to ``system``,
tool calls become ``tool_use`` blocks and tool results ``tool_result`` blocks in the
next user turn. With ``prompt_cache`` the system prompt and the newest turn carry
``cache_control`` marks, so each call re-reads the conversation so far from the cache.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anthropic

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
from evoci.untrusted import json_loads

CACHE = {"type": "ephemeral"}


class AnthropicChat:
    """The Messages API with tool use."""

    def __init__(self, config: ModelConfig, api_key: KeySource):
        self.config = config
        self._api_key = api_key

    def complete(self, messages: list[dict[str, Any]], tools: list[Tool]) -> ModelTurn:
        cfg = self.config
        key = self._api_key()
        acct = Accounting(cfg, key)
        system, turns = to_anthropic(messages, cache=cfg.prompt_cache)
        request: dict[str, Any] = {"model": cfg.model, "max_tokens": cfg.max_tokens, "messages": turns}
        if system:
            request["system"] = system
        if tools:
            request["tools"] = [t.anthropic_schema() for t in tools]
        if cfg.temperature is not None:
            request["temperature"] = cfg.temperature
        if cfg.top_p is not None:
            request["top_p"] = cfg.top_p
        started = time.monotonic()
        client = anthropic.Anthropic(api_key=key, base_url=cfg.base_url, timeout=cfg.timeout_s, max_retries=0)
        try:
            with client:
                raw = client.messages.with_raw_response.create(**request)
                response = read_reply(raw.parse, acct, started)
        except anthropic.APIStatusError as exc:
            raise _status_error(exc, acct, started) from None
        except anthropic.APITimeoutError:
            raise TransientModelError("timeout", acct.call(started, error=f"timeout after {cfg.timeout_s} s")) from None
        except anthropic.APIConnectionError as exc:
            raise TransientModelError("connection", acct.call(started, error=f"connection error: {exc}")) from None
        usage = response.usage
        read = getattr(usage, "cache_read_input_tokens", 0) or 0
        written = getattr(usage, "cache_creation_input_tokens", 0) or 0
        call = acct.call(
            started,
            input_tokens=usage.input_tokens + read + written,
            output_tokens=usage.output_tokens,
            cached_tokens=read,
            cache_write_tokens=written,
            finish_reason=response.stop_reason,
        )
        text = "".join(block.text for block in response.content if block.type == "text")
        calls = read_reply(lambda: [  # written back as text: as deep as the SDK could read, or not at all
            ToolCall(id=block.id, name=block.name, arguments=json.dumps(block.input))
            for block in response.content
            if block.type == "tool_use"
        ], acct, started)
        refusal = (text or "the model refused") if response.stop_reason == "refusal" else None
        return ModelTurn(text, calls, response.stop_reason, call, refusal)


def _status_error(exc: anthropic.APIStatusError, acct: Accounting, started: float) -> ModelError:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    kind, message = error.get("type"), str(error.get("message") or exc.message)
    text = f"HTTP {exc.status_code}" + (f" {kind}" if kind else "") + f": {message}"
    text = acct.scrub(text)  # error bodies can echo the key
    call = acct.call(started, error=text)
    if "prompt is too long" in message.lower() or exc.status_code == 413:
        return ContextOverflow(text, call)
    if exc.status_code in REJECTED_STATUSES:
        return RejectedRequest(text, call)
    if exc.status_code in (408, 409, 429) or exc.status_code >= 500:  # 529: overloaded
        return TransientModelError(text, call, retry_after=retry_after_s(exc.response.headers))
    return ModelError(text, call)


def to_anthropic(
    messages: list[dict[str, Any]], *, cache: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Neutral messages → (system blocks, Messages API turns), consecutive same-role turns merged."""
    system = [{"type": "text", "text": m["content"]} for m in messages if m["role"] == "system"]
    turns: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "user":
            role, blocks = "user", [{"type": "text", "text": m["content"]}]
        elif m["role"] == "tool":
            role = "user"
            blocks = [{"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"],
                       "is_error": bool(m.get("is_error"))}]  # fmt: skip
        elif m["role"] == "assistant":
            role = "assistant"
            blocks = [{"type": "text", "text": m["content"]}] if m.get("content") else []
            blocks += [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": _input(c["arguments"])}
                       for c in m.get("tool_calls") or []]  # fmt: skip
            blocks = blocks or [{"type": "text", "text": "(no reply)"}]
        else:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    if cache:
        if system:
            system[-1]["cache_control"] = CACHE
        if turns:
            turns[-1]["content"][-1]["cache_control"] = CACHE
    return system, turns


def _input(arguments: str) -> Any:
    try:
        value = json_loads(arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


__all__ = ["AnthropicChat", "to_anthropic"]
