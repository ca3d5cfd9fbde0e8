"""Who attempts a SWE-Bench-CL issue, chosen by ``AgentConfig.kind``.

Harness-side baselines (no workspace, no model): ``gold`` (the issue's patch: resolves every
valid issue at every stage), ``null`` (no change: resolves nothing), and ``scripted``
(gold at the cells listed in ``options.resolve`` as ``"i,j"`` — memory stage i, position
j; a list, or one string ``"0,1;1,2"`` — and no change elsewhere: a known, uneven matrix for testing the metrics). Agents in a
workspace at the issue's base: ``llm`` (a tool loop with the SWE-Bench-CL prompt and the
retrieved memory) and ``command`` (an external CLI reading the same prompt).
"""

from __future__ import annotations

import time

from evoci.agents.base import AgentOutcome
from evoci.domain import AgentConfig, TaskSpec
from evoci.errors import InputError
from evoci.sandbox.base import Sandbox
from evoci.swe_bench_cl.loader import CLIssue
from evoci.swe_bench_cl.prompt import SYSTEM_PROMPT, task_prompt
from evoci.swe_evo.agents import Prediction, run_workspace_agent
from evoci.workspace import Workspace

BASELINES = ("gold", "null", "scripted")
WORKSPACE_AGENTS = ("llm", "command")
KINDS = (*BASELINES, *WORKSPACE_AGENTS)


def check_agent(config: AgentConfig) -> AgentConfig:
    if config.kind not in KINDS:
        raise InputError(f"unknown SWE-Bench-CL agent {config.kind!r} — choose one of: {', '.join(KINDS)}")
    if config.kind == "scripted" and not all(_cell(c) for c in _cells(config)):
        raise InputError("the scripted agent's options.resolve lists cells as \"i,j\" (memory stage, position)")
    return config


def baseline_patch(config: AgentConfig, issue: CLIssue, stage: int) -> Prediction:
    started = time.monotonic()
    cells = {_cell(c) for c in _cells(config)}
    solve = config.kind == "gold" or (config.kind == "scripted" and (stage, issue.position) in cells)
    patch = issue.instance.answers.patch if solve else ""
    outcome = AgentOutcome(message=f"{config.kind} baseline: {'the gold patch' if solve else 'no change'}",
                           seconds=time.monotonic() - started)
    return Prediction(patch, outcome)


def workspace_patch(config: AgentConfig, issue: CLIssue, memory: str, workspace: Workspace, start_sha: str,
                    sandbox: Sandbox) -> Prediction:
    """Run an llm or command agent in ``workspace`` (the issue's base, no history); its diff is the prediction."""
    task = TaskSpec(task_id=issue.instance_id, repo=str(workspace.path), base_ref=start_sha, oracle_ref=start_sha,
                    protocol="swe-bench-cl", pythonpath=(),
                    metadata={"repo": issue.instance.repo, "sequence_id": issue.sequence_id, "position": issue.position})
    return run_workspace_agent(config, task, task_prompt(issue, memory), SYSTEM_PROMPT, workspace, start_sha, sandbox)


def _cells(config: AgentConfig) -> list[str]:
    given = config.options.get("resolve", [])
    return [c for c in given.split(";") if c.strip()] if isinstance(given, str) else list(given)


def _cell(text) -> tuple[int, int] | None:
    try:
        i, j = (int(x) for x in str(text).split(","))
    except ValueError:
        return None
    return i, j

