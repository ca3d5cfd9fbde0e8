"""``LLMArchitect`` and ``LLMProgrammer``: the SWE-CI roles played by a chat model with tools.

Build one from a run's ``AgentConfig(kind="llm", model=..., options={...})`` with
``LLMArchitect.from_agent_config(cfg)`` (or ``make_llm_agent(role, cfg)``), or from a
client, e.g. ``LLMProgrammer(ModelBlock.load("gpt").chat_model())``.

Everything the model does is data in the ``AgentOutcome``. Only infrastructure failures
(the sandbox died) and configuration errors (no API key) raise; the exception then
carries the partial outcome as ``exc.outcome`` so paid calls can still be recorded.
"""

from __future__ import annotations

import os
import re

from evoci.agents.base import REQUIREMENT_FILE, AgentContext, AgentOutcome, AgentStatus, Role
from evoci.agents.llm import prompts
from evoci.agents.llm.client import ChatModel, ModelError, RejectedRequest, TransientModelError, make_chat_model
from evoci.agents.llm.config import ModelConfig
from evoci.agents.llm.loop import AgentLoop, LimitReached, Refused
from evoci.agents.llm.tools import Workbench, tools_for
from evoci.agents.requirement import validate_requirement
from evoci.domain import AgentConfig
from evoci.errors import ProviderRejected, ProviderUnavailable

MESSAGE_CHARS = 2000  # longest outcome message kept
_XML_BLOCK = re.compile(r"<requirements>.*</requirements>", re.DOTALL)


class LLMAgent:
    """Shared by both roles: run the loop, turn its ending into an ``AgentOutcome``."""

    role: Role
    system_prompt: str

    def __init__(self, model: ChatModel, *, name: str | None = None):
        self.model = model
        self.name = name or f"llm:{model.config.provider}/{model.config.model}"

    @classmethod
    def from_agent_config(cls, cfg: AgentConfig) -> "LLMAgent":
        """The agent for an ``llm`` AgentConfig (raises ``InputError`` on bad options)."""
        return cls(make_chat_model(ModelConfig.from_agent_config(cfg)))

    def run(self, ctx: AgentContext) -> AgentOutcome:
        loop = AgentLoop(self.model, tools_for(self.role), Workbench(ctx.sandbox, self.role), on_call=ctx.on_call)
        loop.messages.append({"role": "system", "content": self.system_prompt})
        outcome = AgentOutcome()
        try:
            outcome.status, outcome.message = self.work(loop, ctx)
        except LimitReached as exc:
            outcome.status, outcome.message = AgentStatus.LIMIT, str(exc)
        except (RejectedRequest, TransientModelError) as exc:
            raise _not_the_agents(exc, self.model.config, outcome) from None
        except (ModelError, Refused) as exc:
            outcome.status, outcome.message = AgentStatus.MODEL_ERROR, f"model error: {exc}"
        except Exception as exc:
            exc.outcome = outcome  # type: ignore[attr-defined]
            raise
        finally:
            outcome.calls, outcome.trajectory, outcome.seconds = loop.calls, loop.messages, loop.elapsed
            if loop.notes:
                outcome.message = "; ".join([outcome.message, *loop.notes]).strip("; ")
            outcome.message = outcome.message[:MESSAGE_CHARS]
        return outcome

    def work(self, loop: AgentLoop, ctx: AgentContext) -> tuple[AgentStatus, str]:
        raise NotImplementedError


def _not_the_agents(exc: ModelError, config: ModelConfig, outcome: AgentOutcome) -> Exception:
    """A provider failure that says nothing about the agent: bad input (stops the task) or an outage (retried).

    The partial outcome rides along as ``.outcome``, so the calls already made are recorded.
    """
    where = f"{config.provider} model {config.model!r}" + (f" at {config.base_url}" if config.base_url else "")
    if isinstance(exc, RejectedRequest):
        error: Exception = ProviderRejected(
            f"the {where} rejected the request ({exc}) — check the API key, the model name and base_url; "
            "nothing was scored")
    else:
        error = ProviderUnavailable(f"the {where} kept failing after {config.max_retries} retries ({exc}) — "
                                    "an outage, not the agent: the node is retried, and the task gets no score if "
                                    "every retry fails")
    error.outcome = outcome  # type: ignore[attr-defined]
    return error


class LLMArchitect(LLMAgent):
    """Reads the code and the non-passed tests; writes a validated ``.evoci/requirement.xml``."""

    role = Role.ARCHITECT
    system_prompt = prompts.ARCHITECT_PROMPT + "\n" + prompts.ARCHITECT_TOOLS

    def work(self, loop: AgentLoop, ctx: AgentContext) -> tuple[AgentStatus, str]:
        loop.messages.append({"role": "user", "content": prompts.architect_task(ctx)})
        reasks = self.model.config.max_reasks
        for attempt in range(reasks + 1):
            answer = loop.run()
            errors = self.check(loop, answer)
            if not errors:
                return AgentStatus.OK, f"requirement.xml accepted after {attempt} re-asks"
            if attempt == reasks:
                return AgentStatus.INVALID_OUTPUT, f"requirement.xml invalid after {reasks} re-asks: {'; '.join(errors)}"
            listed = "\n".join(f"- {e}" for e in errors)
            loop.messages.append({"role": "user", "content": prompts.REASK.format(errors=listed)})
        raise AssertionError("unreachable")  # pragma: no cover

    def check(self, loop: AgentLoop, answer: str) -> list[str]:
        """Validation errors of the requirement written in this attempt (or given as the answer)."""
        bench = loop.bench
        if REQUIREMENT_FILE not in bench.written:
            block = _XML_BLOCK.search(answer or "")
            if block is None:
                return [f"you did not write {REQUIREMENT_FILE}: save it with the write_file tool"]
            bench.write_text(REQUIREMENT_FILE, block.group(0) + "\n")
            loop.note(f"the requirement was taken from the final answer and saved to {REQUIREMENT_FILE}")
        try:
            text = bench.sandbox.read_file(REQUIREMENT_FILE).decode("utf-8", errors="replace")
        except FileNotFoundError:
            return [f"{REQUIREMENT_FILE} does not exist"]
        return validate_requirement(text)


class LLMProgrammer(LLMAgent):
    """Reads ``.evoci/requirement.xml`` and edits the code to meet it."""

    role = Role.PROGRAMMER
    system_prompt = prompts.PROGRAMMER_PROMPT + "\n" + prompts.PROGRAMMER_TOOLS

    def work(self, loop: AgentLoop, ctx: AgentContext) -> tuple[AgentStatus, str]:
        requirement = ctx.requirement
        if requirement is None:
            try:
                requirement = ctx.sandbox.read_file(REQUIREMENT_FILE).decode("utf-8", errors="replace")
            except FileNotFoundError:
                requirement = None
        loop.messages.append({"role": "user", "content": prompts.programmer_task(ctx, requirement)})
        answer = loop.run()
        edited = sorted(p for p in loop.bench.written if not p.startswith(".evoci" + os.sep))
        return AgentStatus.OK, f"edited {len(edited)} files: {answer.strip()}"


def make_llm_agent(role: Role | str, cfg: AgentConfig) -> LLMAgent:
    """``LLMArchitect`` or ``LLMProgrammer`` for ``role``, from an ``llm`` AgentConfig."""
    cls = {Role.ARCHITECT: LLMArchitect, Role.PROGRAMMER: LLMProgrammer}[Role(role)]
    if cfg.options.get("model_block"):
        # A saved ModelBlock: its client reads the API key from the block at call time.
        from evoci.blocks.model import ModelBlock

        return cls(ModelBlock.load(cfg.options["model_block"]).chat_model())
    return cls.from_agent_config(cfg)


__all__ = ["LLMAgent", "LLMArchitect", "LLMProgrammer", "make_llm_agent"]
