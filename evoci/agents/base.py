"""The agent interface: an architect and a programmer, each given an ``AgentContext``.

Agents reach the workspace only through ``ctx.sandbox``. What an agent does is data:
``AgentOutcome`` records its status, its model calls and its trajectory, and the harness
stores all three. An agent raises only for infrastructure failure (``InfrastructureError``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from evoci.domain import TaskSpec
from evoci.sandbox import budget
from evoci.sandbox.base import Sandbox

# Where the harness puts the architect's inputs and reads its output, relative to the
# workspace root. The folder is excluded from the workspace's commits.
HARNESS_DIR = ".evoci"
NON_PASSED_DIR = f"{HARNESS_DIR}/non-passed"
REQUIREMENT_FILE = f"{HARNESS_DIR}/requirement.xml"


# Agents that run no model-written code: they may use an unisolated sandbox when no isolated
# one can start here (the demo on a machine without bubblewrap or Docker).
TRUSTED_KINDS = frozenset({"replay", "reference", "gold", "empty", "null"})


class Role(StrEnum):
    ARCHITECT = "architect"
    PROGRAMMER = "programmer"


class AgentStatus(StrEnum):
    """How an attempt ended. Every value is scored; none is retried by the harness."""

    OK = "ok"
    LIMIT = "limit"  # a step, token, cost, wall-clock or workspace-size limit ended the attempt
    INVALID_OUTPUT = "invalid_output"  # e.g. no valid requirement.xml after the allowed re-asks
    MODEL_ERROR = "model_error"  # refusal, context overflow, or API errors after retries


@dataclass(frozen=True)
class ModelCall:
    """One model API call, as accounted in the ``agent_calls`` table."""

    model: str
    provider: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float | None = 0.0  # None: the price is unknown (never shown as free)
    latency_s: float = 0.0
    finish_reason: str | None = None
    error: str | None = None


@dataclass
class AgentContext:
    """Everything an agent may know about the current iteration."""

    task: TaskSpec
    iteration: int
    max_iterations: int
    sandbox: Sandbox
    # The task's own repository and resolved refs: the replay agent replays its history;
    # model-driven agents must not read it (it contains the oracle).
    source_repo: Path
    base_sha: str
    oracle_sha: str
    requirement: str | None = None  # the architect's requirement.xml, for the programmer
    # Called with each model call as soon as it is answered, so the harness records it at once
    # (a run killed mid-attempt keeps what it paid for). Agents that make calls should call it.
    on_call: Callable[[ModelCall], None] | None = None
    # Where an agent behind the model gateway keeps its request/response transcript (JSON lines),
    # set by the node; None = the transcript stays in the trajectory only.
    transcript: Path | None = None


@dataclass
class AgentOutcome:
    """What one agent attempt did."""

    status: AgentStatus = AgentStatus.OK
    message: str = ""
    calls: list[ModelCall] = field(default_factory=list)
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    node_try: int = 1  # set by the harness: which try of the node produced this outcome
    node_run: str = ""  # set by the harness: the id of the node execution (unique across flow runs and retries)


class Agent(Protocol):
    """An architect or a programmer."""

    role: Role
    name: str

    def run(self, ctx: AgentContext) -> AgentOutcome:
        """Do one iteration's work in ``ctx.sandbox``; return what happened."""
        ...


def discard_over_budget(outcome: AgentOutcome, sandbox: Sandbox, restore: Callable[[], None]) -> bool:
    """When a command of the attempt wrote more into the workspace than its budget allows
    (``evoci.sandbox.budget``): ``restore`` puts the workspace back to the attempt's input, so nothing
    it wrote is committed, scanned or graded, and the attempt ends ``limit``, saying so. The run goes
    on: the input is graded as usual. Returns whether it did.
    """
    allowance = budget.overrun(sandbox)
    if allowance is None:
        return False
    restore()
    outcome.status, outcome.message = AgentStatus.LIMIT, budget.discarded(allowance)
    return True
