"""Usage of one model call, read from the upstream's answer as it passes through the gateway.

Three wire protocols, each streamed (SSE) or not:

- Anthropic Messages: ``usage`` of the message (JSON), or ``message_start.message.usage`` plus the
  cumulative ``message_delta.usage`` (SSE). Input = uncached + cache read + cache write tokens.
- OpenAI Chat Completions: ``usage`` (JSON), or the last chunk's ``usage`` when the request asked
  for ``stream_options.include_usage`` (the gateway asks for it on every streamed request).
- OpenAI Responses: ``usage`` of the response (JSON), or that of ``response.completed`` /
  ``response.incomplete`` / ``response.failed`` (SSE).

Tokens the answer did not report stay None: the call is recorded with what is known, never a
made-up 0 passed off as measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evoci.untrusted import json_loads

PROTOCOLS = {"/v1/messages": "anthropic", "/v1/chat/completions": "chat", "/v1/responses": "responses"}


@dataclass
class Usage:
    """What one answer said about itself."""

    model: str | None = None
    input_tokens: int | None = None  # cached and cache-written included
    output_tokens: int | None = None
    cached_tokens: int | None = None
    cache_write_tokens: int = 0
    finish_reason: str | None = None

    @property
    def reported(self) -> bool:
        return self.input_tokens is not None or self.output_tokens is not None


def protocol_of(path: str) -> str | None:
    """'anthropic', 'chat' or 'responses' for a model API path (with or without '/v1'), else None."""
    path = path.split("?", 1)[0].rstrip("/")
    if not path.startswith("/v1/"):
        path = "/v1" + path
    return PROTOCOLS.get(path)


def from_json(protocol: str, body: bytes) -> Usage:
    """The usage of a non-streamed answer."""
    usage = Usage()
    try:
        data = json_loads(body)
    except (ValueError, UnicodeDecodeError):
        return usage
    if isinstance(data, dict):
        _event(protocol, usage, data if protocol != "responses" else {"type": "response.completed", "response": data})
    return usage


class StreamReader:
    """Feeds SSE bytes as they pass and keeps the usage their events report."""

    def __init__(self, protocol: str):
        self.protocol = protocol
        self.usage = Usage()
        self._pending = b""

    def feed(self, chunk: bytes) -> None:
        self._pending += chunk
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            self._line(line.rstrip(b"\r"))

    def close(self) -> Usage:
        if self._pending:
            self._line(self._pending.rstrip(b"\r"))
            self._pending = b""
        return self.usage

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"data:"):
            return
        payload = line[5:].strip()
        if not payload or payload == b"[DONE]":
            return
        try:
            data = json_loads(payload)
        except (ValueError, UnicodeDecodeError):
            return
        if isinstance(data, dict):
            _event(self.protocol, self.usage, data)


def _event(protocol: str, usage: Usage, data: dict[str, Any]) -> None:
    if protocol == "anthropic":
        _anthropic(usage, data)
    elif protocol == "chat":
        _chat(usage, data)
    else:
        _responses(usage, data)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _anthropic(usage: Usage, data: dict[str, Any]) -> None:
    kind = data.get("type")
    message = data.get("message") if kind == "message_start" else data
    if not isinstance(message, dict):
        return
    usage.model = message.get("model") or usage.model
    if kind == "message_delta":
        usage.finish_reason = (data.get("delta") or {}).get("stop_reason") or usage.finish_reason
    elif message.get("stop_reason"):
        usage.finish_reason = message["stop_reason"]
    raw = message.get("usage")
    if not isinstance(raw, dict):
        return
    if _int(raw.get("output_tokens")) is not None:  # cumulative in message_delta
        usage.output_tokens = raw["output_tokens"]
    plain = _int(raw.get("input_tokens"))
    if plain is not None:
        read = _int(raw.get("cache_read_input_tokens")) or 0
        written = _int(raw.get("cache_creation_input_tokens")) or 0
        usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens = plain + read + written, read, written


def _chat(usage: Usage, data: dict[str, Any]) -> None:
    usage.model = data.get("model") or usage.model
    for choice in data.get("choices") or []:
        if isinstance(choice, dict) and choice.get("finish_reason"):
            usage.finish_reason = choice["finish_reason"]
    raw = data.get("usage")
    if isinstance(raw, dict):
        usage.input_tokens = _int(raw.get("prompt_tokens"))
        usage.output_tokens = _int(raw.get("completion_tokens"))
        usage.cached_tokens = _int((raw.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0


def _responses(usage: Usage, data: dict[str, Any]) -> None:
    if data.get("type") not in ("response.completed", "response.incomplete", "response.failed"):
        return
    response = data.get("response")
    if not isinstance(response, dict):
        return
    usage.model = response.get("model") or usage.model
    reason = (response.get("incomplete_details") or {}).get("reason")
    usage.finish_reason = reason or response.get("status") or usage.finish_reason
    raw = response.get("usage")
    if isinstance(raw, dict):
        usage.input_tokens = _int(raw.get("input_tokens"))
        usage.output_tokens = _int(raw.get("output_tokens"))
        usage.cached_tokens = _int((raw.get("input_tokens_details") or {}).get("cached_tokens")) or 0


__all__ = ["PROTOCOLS", "StreamReader", "Usage", "from_json", "protocol_of"]
