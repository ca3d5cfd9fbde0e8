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

import re
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


# Which events of a stream are read. A stream is mostly text deltas, and reading each as JSON cost
# the gateway more than relaying it (8 µs an event on a loaded machine, a few ms a call). An event
# is read only when its bytes show a key ``_event`` takes: in JSON a key is written out in quotes
# and a quote inside a string is escaped, so the model's text cannot show one, and an event
# without any of them leaves the usage as it was. (Every provider writes its keys plainly; a key
# spelled with \u escapes would be missed.)
_ANTHROPIC_KEYS = (b'"usage"', b'"stop_reason"', b'"model"')
_RESPONSES_KEYS = (b'"response.completed"', b'"response.incomplete"', b'"response.failed"')
# A Chat Completions chunk carries "model" and, once usage is asked for, '"usage": null' and
# '"finish_reason": null' every time: such a chunk is read only when one of them is not null or
# its model is not the one already read. Those are found in a whole piece at once: a usage or
# finish reason that is not null by one search each (``_CHAT_SET``, a literal first, so it runs at
# the speed of ``bytes.find``), another model by counting (every event says the same one). Halving
# the piece and counting again, as for the other protocols, cost more here than relaying it.
_CHAT_NULLABLE = tuple((b'"%s"' % key, (b'"%s":null' % key, b'"%s": null' % key)) for key in (b"usage", b"finish_reason"))
_CHAT_MODEL = re.compile(rb'"model"\s*:\s*"(?:[^"\\]|\\.)*"')
_CHAT_SET = tuple(re.compile(rb'"%s"\s*:\s*+(?!null)' % key) for key in (b"usage", b"finish_reason"))


class StreamReader:
    """Feeds SSE bytes as they pass and keeps the usage their events report."""

    def __init__(self, protocol: str):
        self.protocol = protocol
        self.usage = Usage()
        self._pending = b""
        self._model: bytes | None = None  # '"model": "<the model last read>"' as the event wrote it (Chat Completions)

    def feed(self, chunk: bytes) -> None:
        data = self._pending + chunk
        end = data.rfind(b"\n") + 1
        lines, self._pending = data[:end], data[end:]
        self._read(lines)

    def close(self) -> Usage:
        if self._pending:
            self._line(self._pending.rstrip(b"\r"))
            self._pending = b""
        return self.usage

    def _read(self, lines: bytes) -> None:
        """Read the events of whole lines that may change the usage: runs that cannot are passed over
        whole, halving the lines until the few events that matter are found (a stream's first, its
        last and its finish, among hundreds of text deltas); Chat Completions' are searched for."""
        if self.protocol == "chat":
            for start in self._chat_lines(lines):
                self._line(lines[start:lines.find(b"\n", start)].rstrip(b"\r"))
            return
        if not lines or not self._may_change(lines):
            return
        first = lines.find(b"\n") + 1
        if first in (0, len(lines)):
            self._line(lines.rstrip(b"\n").rstrip(b"\r"))
            return
        cut = lines.find(b"\n", len(lines) // 2) + 1
        cut = first if cut in (0, len(lines)) else cut
        self._read(lines[:cut])
        self._read(lines[cut:])

    def _chat_lines(self, lines: bytes) -> list[int]:
        """Where the Chat Completions events of ``lines`` that may change the usage start, in order:
        a usage or finish reason that is not null, or a model other than the one before it."""
        starts = {lines.rfind(b"\n", 0, found.start()) + 1 for key in _CHAT_SET for found in key.finditer(lines)}
        models = lines.count(b'"model"')
        if models and (self._model is None or lines.count(self._model) != models):
            before, previous_line = self._model, -1
            for found in _CHAT_MODEL.finditer(lines):
                line = lines.rfind(b"\n", 0, found.start()) + 1
                if line == previous_line:  # two models in one event: read the next one whatever it says
                    before = None
                elif found.group() != before:
                    starts.add(line)
                    before = found.group()
                    rest = lines.find(b"\n", found.end())
                    if lines.count(before, rest) == lines.count(b'"model"', rest):
                        break  # the same model from here on (as a stream says it, event after event)
                previous_line = line
        return sorted(starts)

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"data:"):
            return
        payload = line[5:].strip()
        if not payload or payload == b"[DONE]" or not self._may_change(payload):
            return
        try:
            data = json_loads(payload)
        except (ValueError, UnicodeDecodeError):
            return
        if isinstance(data, dict):
            _event(self.protocol, self.usage, data)
            if self.protocol == "chat":
                models = _CHAT_MODEL.findall(payload)
                self._model = models[0] if len(models) == 1 else None

    def _may_change(self, payload: bytes) -> bool:
        """False when the events (one or more lines) cannot change the usage: they need not be read."""
        if self.protocol == "anthropic":
            return any(key in payload for key in _ANTHROPIC_KEYS)
        if self.protocol == "responses":
            return any(key in payload for key in _RESPONSES_KEYS)
        for key, nulls in _CHAT_NULLABLE:
            if payload.count(key) != sum(payload.count(null) for null in nulls):
                return True
        models = payload.count(b'"model"')
        return models > 0 and (self._model is None or payload.count(self._model) != models)


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
