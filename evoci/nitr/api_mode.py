"""NITR's API mode: one model call per step, every visible source file inlined, whole files back.

The prompt holds the step's TASK text and every file of the workspace's current commit
(all languages: the public runner left ``.py`` files out, evoci does not), read through
the sandbox. The answer must be ``{"files": [{"filename", "content"}]}``; each entry
replaces (or creates) one file. A malformed answer is the model's outcome
(``invalid_output``, nothing written), never retried; a failed call after the client's
retries is ``model_error``.
"""

from __future__ import annotations

import time

from evoci.agents.base import AgentOutcome, AgentStatus
from evoci.agents.llm.client import ChatModel, ModelError, complete_with_retries
from evoci.domain import AgentConfig
from evoci.nitr.agents import API_FORMAT, SYSTEM_PROMPT, StepContext, materialize, step_prompt

MAX_FILE_BYTES = 200_000  # a larger file is named but not inlined (binary blobs, generated data)


def inline_files(ctx: StepContext) -> str:
    """Every visible file, as ``=== path ===`` blocks, read through the sandbox."""
    blocks = []
    for path in ctx.visible_files:
        data = ctx.sandbox.read_file(path)
        if b"\0" in data[:8192] or len(data) > MAX_FILE_BYTES:
            blocks.append(f"=== {path} === (binary or too large: {len(data)} bytes, not shown)")
        else:
            blocks.append(f"=== {path} ===\n{data.decode('utf-8', errors='replace')}")
    return "\n\n".join(blocks)


class ApiModeAgent:
    """One call, whole-file replacements, validated."""

    def __init__(self, model: ChatModel):
        self.model = model
        self.name = f"api:{model.config.provider}/{model.config.model}"

    @classmethod
    def from_agent_config(cls, cfg: AgentConfig) -> "ApiModeAgent":
        from evoci.agents.base import Role
        from evoci.agents.llm.roles import make_llm_agent

        # The same model options and ModelBlock support as the llm agent; only the protocol differs.
        return cls(make_llm_agent(Role.PROGRAMMER, cfg.model_copy(update={"kind": "llm"})).model)

    def messages(self, ctx: StepContext) -> list[dict]:
        user = f"{step_prompt(ctx)}\nThe repository's files:\n\n{inline_files(ctx)}\n\n{API_FORMAT}\n"
        return [{"role": "system", "content": f"{SYSTEM_PROMPT}\n\n{API_FORMAT}"}, {"role": "user", "content": user}]

    def run(self, ctx: StepContext) -> AgentOutcome:
        started = time.monotonic()
        messages = self.messages(ctx)
        outcome = AgentOutcome(trajectory=messages)
        try:
            turn = complete_with_retries(self.model, messages, [], outcome.calls.append)
        except ModelError as exc:
            outcome.status, outcome.message = AgentStatus.MODEL_ERROR, f"model error: {exc}"
            outcome.seconds = time.monotonic() - started
            return outcome
        messages.append({"role": "assistant", "content": turn.text, "finish_reason": turn.finish_reason})
        if turn.refusal:
            outcome.status, outcome.message = AgentStatus.INVALID_OUTPUT, f"malformed answer: refused: {turn.refusal}"
        else:
            outcome.status, outcome.message = materialize(turn.text or "", ctx.sandbox)
        outcome.seconds = time.monotonic() - started
        return outcome
