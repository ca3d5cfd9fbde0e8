"""The scripted model's streamed answers (SSE) and its OpenAI Responses answers.

Agent CLIs stream: Claude Code reads Anthropic Messages events, OpenCode Chat Completions chunks
with ``stream_options.include_usage``, Codex CLI only the Responses API. ``ScriptedLLMServer``
renders a reply spec through these functions when a request asks for ``stream: true`` (and for
``/v1/responses`` always through ``responses_reply``), in the event order and shapes the providers
document, so the real SDKs and CLIs parse them and the gateway can read their usage events.
"""

from __future__ import annotations

import json
import time
from typing import Any

Spec = dict[str, Any]


def _sse(event: str | None, data: dict[str, Any] | str) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {event}\n" if event else "").encode() + f"data: {payload}\n\n".encode()


def _arguments(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def openai_stream(reply: dict[str, Any], include_usage: bool) -> list[bytes]:
    """Chat Completions chunks of a rendered (non-streamed) reply: role, content, tool-call deltas,
    the finish reason, then the usage chunk when asked for, then ``[DONE]``."""
    base = {"id": reply["id"], "object": "chat.completion.chunk", "created": reply["created"], "model": reply["model"]}
    choice, message = reply["choices"][0], reply["choices"][0]["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]})

    events = [chunk({"role": "assistant", "content": ""})]
    text = message.get("content") or ""
    for start in range(0, len(text), 16):
        events.append(chunk({"content": text[start:start + 16]}))
    if message.get("refusal"):
        events.append(chunk({"refusal": message["refusal"]}))
    for i, call in enumerate(message.get("tool_calls") or []):
        head = {"index": i, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": ""}}
        events += [chunk({"tool_calls": [head]}),
                   chunk({"tool_calls": [{"index": i, "function": {"arguments": call["function"]["arguments"]}}]})]
    events.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        events.append(_sse(None, {**base, "choices": [], "usage": reply["usage"]}))
    return [*events, _sse(None, "[DONE]")]


def anthropic_stream(reply: dict[str, Any]) -> list[bytes]:
    """Messages events of a rendered reply: message_start (input usage), one content block per
    text or tool use, message_delta (stop reason, cumulative output usage), message_stop."""
    usage = reply["usage"]
    start = {**reply, "content": [], "stop_reason": None,
             "usage": {**usage, "output_tokens": 1}}  # fmt: skip
    events = [_sse("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(reply["content"]):
        if block["type"] == "text":
            opened, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": block["text"]}]
        else:
            opened = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": _arguments(block["input"])}]
        events.append(_sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": opened}))
        events += [_sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"type": "message_delta", "delta": {"stop_reason": reply["stop_reason"], "stop_sequence": None},
             "usage": {"output_tokens": usage["output_tokens"]}}
    return [*events, _sse("message_delta", delta), _sse("message_stop", {"type": "message_stop"})]


def responses_reply(spec: Spec, model: str, usage: dict[str, int], serial: int) -> dict[str, Any]:
    """A Responses API ``response`` object: output items (message, function calls) and usage."""
    output: list[dict[str, Any]] = []
    if spec.get("text") or spec.get("refusal"):
        part = ({"type": "refusal", "refusal": spec["refusal"]} if spec.get("refusal")
                else {"type": "output_text", "text": spec["text"], "annotations": []})
        output.append({"type": "message", "id": f"msg_{serial}", "status": "completed", "role": "assistant",
                       "content": [part]})
    for i, call in enumerate(spec.get("tool_calls") or []):
        output.append({"type": "function_call", "id": f"fc_{serial}_{i}", "call_id": f"call_{serial}_{i}",
                       "name": call["name"], "arguments": _arguments(call["arguments"]), "status": "completed"})
    incomplete = spec.get("finish_reason") == "length"
    return {
        "id": f"resp_scripted_{serial}", "object": "response", "created_at": int(time.time()), "model": model,
        "status": "incomplete" if incomplete else "completed",
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
        "usage": {"input_tokens": usage["input_tokens"],
                  "input_tokens_details": {"cached_tokens": usage["cached_tokens"]},
                  "output_tokens": usage["output_tokens"], "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": usage["input_tokens"] + usage["output_tokens"]},
    }  # fmt: skip


def responses_stream(reply: dict[str, Any]) -> list[bytes]:
    """Responses events: created, in_progress, each output item added → deltas → done, then
    ``response.completed`` (or ``response.incomplete``) carrying the usage."""
    seq = iter(range(1_000_000))
    pending = {**reply, "status": "in_progress", "output": [], "usage": None}

    def event(kind: str, **fields: Any) -> bytes:
        return _sse(kind, {"type": kind, "sequence_number": next(seq), **fields})

    events = [event("response.created", response=pending), event("response.in_progress", response=pending)]
    for index, item in enumerate(reply["output"]):
        if item["type"] == "message":
            part = item["content"][0]
            empty = {**part, "text": ""} if part["type"] == "output_text" else {**part, "refusal": ""}
            events += [event("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []}),
                       event("response.content_part.added", output_index=index, item_id=item["id"], content_index=0, part=empty)]
            if part["type"] == "output_text":
                events += [event("response.output_text.delta", output_index=index, item_id=item["id"], content_index=0,
                                 delta=part["text"], logprobs=[]),
                           event("response.output_text.done", output_index=index, item_id=item["id"], content_index=0,
                                 text=part["text"], logprobs=[])]
            events.append(event("response.content_part.done", output_index=index, item_id=item["id"], content_index=0, part=part))
        else:
            events += [event("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "arguments": ""}),
                       event("response.function_call_arguments.delta", output_index=index, item_id=item["id"],
                             delta=item["arguments"]),
                       event("response.function_call_arguments.done", output_index=index, item_id=item["id"],
                             arguments=item["arguments"])]
        events.append(event("response.output_item.done", output_index=index, item=item))
    final = "response.incomplete" if reply["status"] == "incomplete" else "response.completed"
    return [*events, event(final, response=reply)]


__all__ = ["anthropic_stream", "openai_stream", "responses_reply", "responses_stream"]
