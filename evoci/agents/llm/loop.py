"""The agent loop: query the model, run its tool calls, repeat until it answers in words.

``AgentLoop.run()`` ends when the model replies without a tool call (its final text is
returned) or raises: ``LimitReached`` (steps, tokens, cost, wall clock), ``Refused``,
or a ``ModelError`` once retries are spent. ``messages`` is the trajectory (neutral
message dicts, see ``client``) and ``calls`` every model call made, failed ones included;
both stay readable whatever ended the loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from evoci.agents.base import ModelCall
from evoci.agents.llm.client import ChatModel, ModelTurn, complete_with_retries
from evoci.agents.llm.prices import price_for
from evoci.agents.llm.tools import Tool, ToolCall, Workbench, execute


class LimitReached(Exception):
    """A step, token, cost or wall-clock limit ended the attempt."""


class Refused(Exception):
    """The model declined to answer (refusal or content filter)."""


@dataclass
class AgentLoop:
    model: ChatModel
    tools: list[Tool]
    bench: Workbench
    messages: list[dict[str, Any]] = field(default_factory=list)
    calls: list[ModelCall] = field(default_factory=list)
    steps: int = 0
    started: float = field(default_factory=time.monotonic)
    on_call: Callable[[ModelCall], None] | None = None  # sees every call (failed ones too) as it is made

    def __post_init__(self) -> None:
        cfg = self.model.config
        if price_for(cfg.model, cfg.price) is None:
            self.note(f"no price is known for model {cfg.model!r}: its cost is recorded as 0 (set the option 'price')")

    def run(self) -> str:
        """Step until the model answers without tool calls; return that answer."""
        while True:
            turn = self.query()
            if not turn.tool_calls:
                return turn.text
            self.act(turn.tool_calls)

    def query(self) -> ModelTurn:
        self.check_limits()
        self.steps += 1
        turn = complete_with_retries(self.model, self.messages, self.tools, self.record)
        self.messages.append(
            {"role": "assistant", "content": turn.text, "tool_calls": [asdict(c) for c in turn.tool_calls],
             "finish_reason": turn.finish_reason, "call_index": len(self.calls) - 1}  # fmt: skip
        )
        if turn.refusal:
            raise Refused(f"the model refused: {turn.refusal}")
        return turn

    def record(self, call: ModelCall) -> None:
        self.calls.append(call)
        if self.on_call:
            self.on_call(call)

    def act(self, tool_calls: list[ToolCall]) -> None:
        for call in tool_calls:
            result = execute(self.tools, self.bench, call)
            self.messages.append(
                {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": result.content,
                 "is_error": result.is_error}  # fmt: skip
            )

    def check_limits(self) -> None:
        cfg = self.model.config
        spent = {
            "input tokens": (sum(c.input_tokens for c in self.calls), cfg.max_input_tokens),
            "output tokens": (sum(c.output_tokens for c in self.calls), cfg.max_output_tokens),
            "cost (USD)": (sum(c.cost_usd for c in self.calls), cfg.max_cost_usd),
            "seconds": (self.elapsed, cfg.max_seconds),
            "model turns": (self.steps, cfg.max_steps),
        }
        for what, (used, limit) in spent.items():
            if limit is not None and used >= limit:
                raise LimitReached(f"limit reached: {what} {used:g} of at most {limit:g}")

    def note(self, text: str) -> None:
        """Add a remark for people reading the trajectory (never sent to the model)."""
        self.messages.append({"role": "note", "content": text})

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def notes(self) -> list[str]:
        return [m["content"] for m in self.messages if m["role"] == "note"]


__all__ = ["AgentLoop", "LimitReached", "Refused"]
