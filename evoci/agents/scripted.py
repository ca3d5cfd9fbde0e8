"""``ScriptedLLMServer``: a fake model API on 127.0.0.1 that answers from a script.

It speaks both wire protocols the LLM agents use, so the **real** ``openai`` and
``anthropic`` SDKs can be pointed at it (``base_url``) in tests and in the offline demo:

- OpenAI Chat Completions: ``POST /v1/chat/completions`` (non-streaming, ``tool_calls``
  with JSON-string ``arguments``, ``usage.prompt_tokens_details.cached_tokens``);
- Anthropic Messages: ``POST /v1/messages`` (``tool_use`` blocks, ``usage`` with
  ``cache_read_input_tokens``);
- OpenAI Responses: ``POST /v1/responses`` (``function_call`` output items, ``usage``).

A request with ``stream: true`` gets server-sent events instead, as each provider streams them
(``evoci.agents.scripted_stream``): the agent CLIs stream, and the gateway reads their usage.
A spec's ``event_delay`` (seconds) paces the events as a model's generation would.

The script is a list of reply specs served in order, or a callable
``(protocol, request_json) -> spec`` (``protocol`` is ``"openai"``, ``"anthropic"`` or ``"responses"``).
Build specs with ``text``, ``tool_call``, ``tool_calls``, ``rate_limited``,
``server_error``, ``rejected`` (401/403/404), ``context_overflow`` and ``refusal``; errors use each provider's real
status codes and body shapes. Every request is recorded in ``server.requests``. With
``strict=True`` (default) a conversation the real API would reject (a tool result without
its tool call, Anthropic turns out of order) gets a 400, so client bugs show up in tests.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evoci.agents import scripted_stream as stream
from evoci.untrusted import json_loads

Spec = dict[str, Any]
Script = Iterable[Spec] | Callable[[str, dict[str, Any]], Spec | None]
PATHS = {"/v1/chat/completions": "openai", "/chat/completions": "openai", "/v1/messages": "anthropic",
         "/v1/responses": "responses", "/responses": "responses"}


def text(content: str, *, usage: dict[str, int] | None = None, **extra: Any) -> Spec:
    """A reply in words (the agent loop ends)."""
    return {"text": content, "usage": usage, **extra}


def tool_call(name: str, arguments: dict[str, Any] | str, *, usage: dict[str, int] | None = None, **extra: Any) -> Spec:
    """A reply with one tool call; a ``str`` of arguments is sent as is (e.g. malformed JSON)."""
    return tool_calls((name, arguments), usage=usage, **extra)


def tool_calls(
    *calls: tuple[str, dict[str, Any] | str], text: str = "", usage: dict[str, int] | None = None, **extra: Any
) -> Spec:
    """A reply with several tool calls, in order."""
    return {"text": text, "tool_calls": [{"name": n, "arguments": a} for n, a in calls], "usage": usage, **extra}


def rate_limited(retry_after: float = 1.0) -> Spec:
    """HTTP 429 with a ``Retry-After`` header (seconds)."""
    return {"error": "rate_limit", "headers": {"retry-after": f"{retry_after:g}"}}


def server_error(status: int = 500) -> Spec:
    """HTTP 5xx (500 server error; 529 is Anthropic's "overloaded")."""
    return {"error": "overloaded" if status == 529 else "server", "status": status}


def rejected(status: int = 401) -> Spec:
    """HTTP 401 (bad API key), 403 (no access to the model) or 404 (unknown model or endpoint)."""
    return {"error": {401: "auth", 403: "permission", 404: "not_found"}[status]}


def context_overflow() -> Spec:
    """The provider's "the prompt does not fit the context window" error."""
    return {"error": "context_overflow"}


def refusal(content: str = "I can't help with that.") -> Spec:
    """The model declines (OpenAI ``message.refusal``; Anthropic ``stop_reason: refusal``)."""
    return {"refusal": content}


_OPENAI_ERRORS = {
    "rate_limit": (429, "requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again later."),
    "server": (500, "server_error", None, "The server had an error while processing your request. Sorry about that!"),
    "overloaded": (503, "server_error", None, "The engine is currently overloaded, please try again later."),
    "context_overflow": (400, "invalid_request_error", "context_length_exceeded",
                         "This model's maximum context length is 128000 tokens. However, your messages resulted in "
                         "131072 tokens. Please reduce the length of the messages."),  # fmt: skip
    "invalid": (400, "invalid_request_error", None, ""),
    "auth": (401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    "permission": (403, "invalid_request_error", "model_not_allowed", "Your organization does not have access to this model."),
    "not_found": (404, "invalid_request_error", "model_not_found", "The model does not exist or you do not have access to it."),
}
_ANTHROPIC_ERRORS = {
    "rate_limit": (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."),
    "server": (500, "api_error", "Internal server error"),
    "overloaded": (529, "overloaded_error", "Overloaded"),
    "context_overflow": (400, "invalid_request_error", "prompt is too long: 208338 tokens > 200000 maximum"),
    "invalid": (400, "invalid_request_error", ""),
    "auth": (401, "authentication_error", "invalid x-api-key"),
    "permission": (403, "permission_error", "Your API key does not have permission to use the specified resource."),
    "not_found": (404, "not_found_error", "model: no such model"),
}


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    protocol: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: str
    at: float  # time.monotonic() on arrival


class ScriptedLLMServer:
    """A fake OpenAI + Anthropic API on 127.0.0.1 answering from a script (a context manager)."""

    def __init__(self, script: Script, *, strict: bool = True, models: Collection[str] | None = None):
        """``models``: the models ``GET /v1/models/<id>`` knows (200), as OpenAI and Anthropic answer it;
        None leaves the route out (404, as a server without it answers)."""
        self._script = script if callable(script) else iter(list(script))
        self.strict = strict
        self.models = None if models is None else frozenset(models)
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> "ScriptedLLMServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # each event leaves at once, as a streaming API sends it

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                raw = self.rfile.read(int(self.headers.get("content-length") or 0)).decode()
                status, headers, body = server._handle(self.path, dict(self.headers.items()), raw)
                if isinstance(body, list):  # server-sent events, one chunk each
                    self.send_response(status)
                    for name, value in {"content-type": "text/event-stream", "cache-control": "no-cache",
                                        "transfer-encoding": "chunked", **headers}.items():
                        self.send_header(name, value)
                    self.end_headers()
                    for index, event in enumerate([*body, b""]):
                        if index and getattr(body, "delay", 0):
                            time.sleep(body.delay)
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                        self.wfile.flush()
                    return
                data = _encode(body)
                self.send_response(status)
                for name, value in {"content-type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                name = urllib.parse.unquote(self.path.split("?", 1)[0].removeprefix("/v1/models/"))
                known = self.path.startswith("/v1/models/") and server.models is not None and name in server.models
                data = _encode({"id": name, "object": "model", "type": "model"} if known else
                               {"error": {"message": f"no model {name!r}", "type": "not_found_error"}})
                self.send_response(200 if known else 404)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="scripted-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "ScriptedLLMServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "start the server first"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def base_url(self, protocol: str) -> str:
        """What to give the SDK as ``base_url``: '<url>/v1' for OpenAI, '<url>' for Anthropic."""
        return f"{self.url}/v1" if protocol == "openai" else self.url

    # -- answering -------------------------------------------------------------------------
    def _handle(self, path: str, headers: dict[str, str], raw: str) -> tuple[int, dict[str, str], Any]:
        protocol = PATHS.get(path.split("?", 1)[0])
        try:
            body = json_loads(raw or "{}")
        except ValueError:
            body = None
        with self._lock:
            self.requests.append(RecordedRequest(protocol or "unknown", path, headers, body, raw, time.monotonic()))
            self._ids += 1
            serial = self._ids
        if protocol is None:
            return 404, {}, {"error": {"message": f"no route {path}", "type": "not_found"}}
        if not isinstance(body, dict):  # as the real APIs answer a body they cannot read
            return self._error(protocol, {"error": "invalid", "message": "the request body is not a JSON object"})
        problem = _check_conversation(protocol, body) if self.strict and protocol != "responses" else None
        if problem:
            return self._error(protocol, {"error": "invalid", "message": problem})
        spec = self._next(protocol, body)
        if spec is None:
            exhausted = {"error": "invalid", "message": "ScriptedLLMServer: the script has no reply left"}
            return self._error(protocol, exhausted)
        if spec.get("delay"):
            time.sleep(spec["delay"])
        if spec.get("error"):
            return self._error(protocol, spec)
        usage = _usage(spec, raw)
        render = {"openai": _openai_reply, "anthropic": _anthropic_reply, "responses": stream.responses_reply}[protocol]
        reply = render(spec, body.get("model", "scripted"), usage, serial)
        if not body.get("stream"):
            return 200, {}, reply
        if protocol == "openai":
            events = stream.openai_stream(reply, bool((body.get("stream_options") or {}).get("include_usage")))
        else:
            events = stream.anthropic_stream(reply) if protocol == "anthropic" else stream.responses_stream(reply)
        return 200, {}, _Events(events, spec.get("event_delay") or 0.0)

    def _next(self, protocol: str, body: dict[str, Any]) -> Spec | None:
        if callable(self._script):
            return self._script(protocol, body)
        with self._lock:
            return next(self._script, None)

    def _error(self, protocol: str, spec: Spec) -> tuple[int, dict[str, str], dict[str, Any]]:
        headers = dict(spec.get("headers") or {})
        if protocol != "anthropic":
            status, kind, code, message = _OPENAI_ERRORS[spec["error"]]
            body = {"error": {"message": spec.get("message") or message, "type": kind, "param": None, "code": code}}
            return spec.get("status", status), {"x-request-id": "req_scripted", **headers}, body
        status, kind, message = _ANTHROPIC_ERRORS[spec["error"]]
        body = {"type": "error", "error": {"type": kind, "message": spec.get("message") or message}}
        return spec.get("status", status), {"request-id": "req_scripted", **headers}, body


class _Events(list):
    """Server-sent events to write one by one, ``delay`` seconds apart (a model's pace)."""

    def __init__(self, events: list[bytes], delay: float):
        super().__init__(events)
        self.delay = delay


def _usage(spec: Spec, raw: str) -> dict[str, int]:
    """input_tokens counts cached ones too; default: about four characters per token."""
    given = spec.get("usage") or {}
    out_chars = len(spec.get("text") or "") + sum(len(str(c["arguments"])) for c in spec.get("tool_calls") or [])
    return {
        "input_tokens": given.get("input_tokens", max(len(raw) // 4, 1)),
        "output_tokens": given.get("output_tokens", max(out_chars // 4, 1)),
        "cached_tokens": given.get("cached_tokens", 0),
        "cache_write_tokens": given.get("cache_write_tokens", 0),
    }


def _arguments_text(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _openai_reply(spec: Spec, model: str, usage: dict[str, int], serial: int) -> dict[str, Any]:
    calls = [
        {"id": f"call_{serial}_{i}", "type": "function",
         "function": {"name": c["name"], "arguments": _arguments_text(c["arguments"])}}  # fmt: skip
        for i, c in enumerate(spec.get("tool_calls") or [])
    ]
    message: dict[str, Any] = {"role": "assistant", "content": spec.get("text") or None, "refusal": spec.get("refusal")}
    if calls:
        message["tool_calls"] = calls
    finish = spec.get("finish_reason") or ("tool_calls" if calls else "stop")
    return {
        "id": f"chatcmpl-scripted-{serial}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": usage["input_tokens"],
            "completion_tokens": usage["output_tokens"],
            "total_tokens": usage["input_tokens"] + usage["output_tokens"],
            "prompt_tokens_details": {"cached_tokens": usage["cached_tokens"]},
        },
    }


class Verbatim(str):
    """JSON text sent as it is: a tool input the model wrote deeper than ``json.dumps`` can write."""


def _encode(body: Any) -> bytes:
    """``body`` as JSON, each ``Verbatim`` in it spliced in as written."""
    verbatim: list[str] = []

    def mark(value: Any) -> Any:
        if isinstance(value, Verbatim):
            verbatim.append(value)
            return f"\0verbatim {len(verbatim) - 1}\0"
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        return [mark(v) for v in value] if isinstance(value, list) else value

    text = json.dumps(mark(body))
    for index, raw in enumerate(verbatim):
        text = text.replace(json.dumps(f"\0verbatim {index}\0"), raw)
    return text.encode()


def _anthropic_reply(spec: Spec, model: str, usage: dict[str, int], serial: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if spec.get("text") or spec.get("refusal"):
        content.append({"type": "text", "text": spec.get("text") or spec["refusal"]})
    for i, c in enumerate(spec.get("tool_calls") or []):
        arguments = c["arguments"]
        if isinstance(arguments, str):  # malformed JSON cannot occur on this wire: send what parses
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                pass
            except (RecursionError, ValueError):  # JSON, but too deep (too long a number) for Python
                arguments = Verbatim(arguments)
        content.append({"type": "tool_use", "id": f"toolu_{serial}_{i}", "name": c["name"], "input": arguments})
    stop = "refusal" if spec.get("refusal") else ("tool_use" if spec.get("tool_calls") else "end_turn")
    stop = {"length": "max_tokens"}.get(spec.get("finish_reason"), spec.get("finish_reason")) or stop
    cached, written = usage["cached_tokens"], usage["cache_write_tokens"]
    return {
        "id": f"msg_scripted_{serial}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage["input_tokens"] - cached - written,
            "output_tokens": usage["output_tokens"],
            "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": written,
        },
    }


def _check_conversation(protocol: str, body: dict[str, Any]) -> str | None:
    """Why the real API would reject this conversation's tool-call bookkeeping, if it would."""
    messages = body.get("messages") or []
    if protocol == "openai":
        pending: set[str] = set()
        for m in messages:
            if m.get("role") == "tool":
                if m.get("tool_call_id") not in pending:
                    return f"tool message {m.get('tool_call_id')!r} does not answer a preceding tool call"
                pending.discard(m["tool_call_id"])
            elif pending:
                return f"tool calls {sorted(pending)} have no tool message"
            else:
                pending = {c["id"] for c in m.get("tool_calls") or []}
        return None
    if "max_tokens" not in body:
        return "max_tokens: field required"
    expected_role, pending = "user", set()
    for m in messages:
        if m.get("role") != expected_role:
            return f"messages: roles must alternate starting with user, got {m.get('role')!r}"
        blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text"}]
        results = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
        if results != pending:
            return f"tool_use ids {sorted(pending)} must be answered by tool_result blocks in the next user turn"
        pending = {b["id"] for b in blocks if b.get("type") == "tool_use"}
        expected_role = "assistant" if expected_role == "user" else "user"
    return None


__all__ = [
    "RecordedRequest",
    "ScriptedLLMServer",
    "context_overflow",
    "rate_limited",
    "refusal",
    "rejected",
    "server_error",
    "text",
    "tool_call",
    "tool_calls",
]
