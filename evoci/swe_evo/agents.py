"""Who produces a SWE-EVO prediction (a patch against the base), chosen by ``AgentConfig.kind``.

Baselines, computed by the harness from the answers (no workspace, no model):
``gold`` (the record's patch; must resolve every valid instance), ``empty`` (no change:
"no prediction"), ``replay`` (the release's real history: every non-test change between
the base and the end version's commit). Agents that work in a workspace at the base:
``llm`` (a tool loop with the SWE-EVO prompt) and ``command`` (an external CLI, as for
SWE-CI). ``predictions`` reads a file of existing predictions (``predictions``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import git

from evoci.agents.base import AgentContext, AgentOutcome, AgentStatus, Role, discard_over_budget
from evoci.agents.command import CommandAgent
from evoci.domain import AgentConfig, TaskSpec
from evoci.errors import InputError
from evoci.sandbox.base import Sandbox
from evoci.swe_evo.loader import EvoInstance
from evoci.swe_evo.prompt import SYSTEM_PROMPT, task_prompt
from evoci.swebench.tree import is_test_code
from evoci.workspace import Workspace

BASELINES = ("gold", "empty", "replay")
WORKSPACE_AGENTS = ("llm", "command")
KINDS = (*BASELINES, *WORKSPACE_AGENTS, "predictions")


@dataclass
class Prediction:
    """A patch (None: there is no prediction for this instance) and how the agent got there."""

    patch: str | None
    outcome: AgentOutcome = field(default_factory=AgentOutcome)
    # What the harness removed from the agent's workspace before taking its diff (a planted .git, a
    # link or FIFO at .evoci, a special file, a path too long for git): recorded as tampering.
    # A class-level default, so a prediction cached before this field existed still reads as ().
    tampered: tuple[str, ...] = ()


def resolve_agent(config: AgentConfig) -> AgentConfig:
    """``config`` checked; a predictions file gets its content hash, so a changed file is a new run."""
    if config.kind not in KINDS:
        raise InputError(f"unknown SWE-EVO agent {config.kind!r} — choose one of: {', '.join(KINDS)}")
    if config.kind != "predictions":
        return config
    path = config.options.get("path")
    if not path:
        raise InputError("the predictions agent needs options.path: an OpenHands output.jsonl or a SWE-agent preds.json")
    from evoci.swe_evo.predictions import file_hash

    return config.model_copy(update={"options": {**config.options, "sha256": file_hash(path)}})


def baseline_patch(kind: str, instance: EvoInstance, source: git.Repo) -> Prediction:
    """The gold, empty or replay patch (harness-side: these read the answers or the future history)."""
    started = time.monotonic()
    if kind == "gold":
        patch = instance.answers.patch
    elif kind == "empty":
        patch = ""
    else:
        patch = replay_patch(instance, source)
    outcome = AgentOutcome(message=f"{kind} baseline: {len(patch.splitlines())} patch lines",
                           seconds=time.monotonic() - started)
    return Prediction(patch, outcome)


def replay_patch(instance: EvoInstance, source: git.Repo) -> str:
    """Every non-test change of the real history from the base to the end version's commit."""
    if not instance.end_version_commit:
        raise InputError(f"instance {instance.instance_id!r} has no end_version_commit — the replay baseline needs it")
    changed = source.git.diff("--name-only", "--no-renames", instance.base_commit, instance.end_version_commit).splitlines()
    code = [p for p in changed if not is_test_code(p)]
    if not code:
        return ""
    return source.git.diff("--no-renames", "--binary", instance.base_commit, instance.end_version_commit, "--", *code) + "\n"


def workspace_patch(config: AgentConfig, instance: EvoInstance, workspace: Workspace, start_sha: str,
                    sandbox: Sandbox) -> Prediction:
    """Run an llm or command agent in ``workspace`` (the base, no history); its diff is the prediction."""
    task = instance.task()
    return run_workspace_agent(config, task, task_prompt(task), SYSTEM_PROMPT, workspace, start_sha, sandbox)


def run_workspace_agent(config: AgentConfig, task: TaskSpec, requirement: str, system_prompt: str,
                        workspace: Workspace, start_sha: str, sandbox: Sandbox) -> Prediction:
    """An llm or command programmer with ``system_prompt``, given ``requirement``; its diff is the prediction.

    Shared with SWE-Bench-CL, whose prompt differs.
    """
    # source_repo is the workspace itself: the task's repository holds the future history.
    ctx = AgentContext(task=task, iteration=1, max_iterations=1, sandbox=sandbox, source_repo=workspace.path,
                       base_sha=start_sha, oracle_sha=start_sha, requirement=requirement)
    if config.kind == "command":
        agent = _PromptedCommand.from_config(Role.PROGRAMMER, config)
        agent.system_prompt = system_prompt
    else:
        agent = _llm(config, system_prompt)
    outcome = agent.run(ctx)
    discard_over_budget(outcome, sandbox, lambda: workspace.checkout(start_sha))
    # The commit would remove these silently; named here, they are recorded as SWE-CI's are.
    planted = (*workspace.purge_nested_git(), *workspace.reclaim_harness_dir())
    sha = workspace.commit(1, f"evoci: the agent's prediction ({outcome.status.value})")
    patch = workspace.repo.git.diff("--binary", start_sha, sha)
    return Prediction(patch + "\n" if patch else "", outcome, tampered=tuple(sorted(set(planted))))


class _PromptedCommand(CommandAgent):
    """A command agent whose prompt file holds the protocol's task instead of SWE-CI's programmer prompt."""

    system_prompt = SYSTEM_PROMPT

    def prompt(self, ctx: AgentContext) -> str:
        return f"{self.system_prompt}\n\n{ctx.requirement}"


def _llm(config: AgentConfig, system_prompt: str):
    from evoci.agents.llm.roles import LLMAgent, make_llm_agent

    class PromptedLLM(LLMAgent):
        """The programmer's tools and the protocol's prompt; the final answer is the agent's summary."""

        role = Role.PROGRAMMER

        def work(self, loop, ctx: AgentContext) -> tuple[AgentStatus, str]:
            loop.messages.append({"role": "user", "content": ctx.requirement})
            answer = loop.run()
            return AgentStatus.OK, (answer or "").strip()

    PromptedLLM.system_prompt = system_prompt
    return PromptedLLM(make_llm_agent(Role.PROGRAMMER, config).model)
