"""No answer field reaches an agent: searched in everything a workspace agent can see.

The agent node runs a command agent (the same path an LLM agent takes: workspace at the
base, the SWE-EVO prompt) on every demo instance. Then every line of every answer —
gold patch, test_patch, all_patch, each PR's patches and changed test files — that is
not already in the base is searched for in: every file of the workspace (its git objects
unpacked), the prompt file, the task the agent is handed, and the agent's trajectory.
"""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from evoci.domain import AgentConfig, RunConfig
from evoci.runtime import RunContext
from evoci.swe_evo.demo import build_swe_evo_demo
from evoci.swe_evo.loader import EvoInstance, load_swe_evo
from evoci.swe_evo.prompt import SYSTEM_PROMPT, task_prompt
from evoci.tasks.swe_evo import evo_agent_task, evo_prepare_task
from evoci.workspace import Workspace

MIN_CHARS = 12  # shorter lines ("return x") say nothing about the answer


def answer_fragments(instance: EvoInstance, base_text: str, base_paths: set[str]) -> set[str]:
    """Answer lines (and names of test files the release adds) that the base does not already show."""
    answers = instance.answers
    texts = [answers.patch, answers.test_patch, answers.all_patch]
    for pr in answers.pr_patches:
        texts += [pr.get("patch_without_test") or "", pr.get("test_patch") or ""]
        texts += [f for f in pr.get("changed_test_files") or [] if f not in base_paths]
    fragments = set()
    for text in texts:
        for line in text.splitlines():
            if line.startswith(("+++", "---", "diff --git", "index ", "@@")):
                continue
            body = line[1:].strip() if line[:1] in "+- " else line.strip()
            if len(body) >= MIN_CHARS and body not in base_text:
                fragments.add(body)
    return fragments


def visible_to_the_agent(workspace: Path, instance: EvoInstance, trajectory: list) -> str:
    parts = [SYSTEM_PROMPT, task_prompt(instance.task()), instance.task().model_dump_json(), json.dumps(trajectory)]
    for path in workspace.rglob("*"):
        if path.is_file():
            parts.append(path.read_bytes().decode(errors="replace"))
    objects = Workspace(workspace).repo.git.cat_file("--batch-all-objects", "--batch")  # its history, unpacked
    return "\n".join([*parts, objects])


@pytest.mark.slow
def test_no_answer_reaches_the_agents_workspace_prompt_or_task(tmp_path):
    dataset = build_swe_evo_demo(tmp_path / "demo")
    data = load_swe_evo(dataset)
    agent = AgentConfig(kind="command", options={"command": ["cat", "{prompt_file}"]})
    run = RunContext.create(RunConfig(protocol="swe-evo", programmer=agent), "leak", home=str(tmp_path / "home"))
    for instance in data.instances:
        prepared = evo_prepare_task.fn(instance, run)
        prediction = evo_agent_task.fn(prepared, run)
        assert prediction.patch == ""  # the agent changed nothing: no prediction
        workspace = run.paths.workspace(run.run_id, instance.instance_id)
        base_tree = git.Repo(prepared.repo).commit(prepared.base_sha).tree
        base_text = "\n".join(b.data_stream.read().decode(errors="replace") for b in base_tree.traverse() if b.type == "blob")
        base_paths = {b.path for b in base_tree.traverse() if b.type == "blob"}
        fragments = answer_fragments(instance, base_text, base_paths)
        assert fragments, "the demo's answers must have lines to look for"
        seen = visible_to_the_agent(workspace, instance, prediction.outcome.trajectory)
        assert instance.release_notes.strip() in seen  # the search does reach what the agent saw
        leaked = sorted(f for f in fragments if f in seen)
        assert leaked == [], f"{instance.instance_id}: answer lines visible to the agent: {leaked}"
        # The future is not in the workspace's history either.
        assert instance.end_version_commit not in seen
