"""The scripted demo solver evolves the built-in demo task to its oracle through the LLM agents.

A miniature SWE-CI loop (the real one is the flows' job): the oracle's tests replace the
base's, then each iteration writes the non-passed summary, runs the LLM architect and the
LLM programmer (real SDKs against ScriptedLLMServer serving ``demo_script``), and runs
pytest in the sandbox.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from evoci.agents.base import NON_PASSED_DIR, REQUIREMENT_FILE, AgentContext, AgentStatus
from evoci.agents.llm import LLMArchitect, LLMProgrammer, ModelConfig, make_chat_model, make_llm_agent
from evoci.agents.requirement import validate_requirement
from evoci.swe_ci.scripted_demo import demo_agent_config, demo_script
from evoci.demo_repo import load_history
from evoci.domain import TaskSpec
from evoci.sandbox.environment import BuiltEnvironment
from evoci.sandbox.local import LocalSandbox
from evoci.swe_ci.demo import HISTORY_DIR

from .conftest import MODELS


def tree(upto: int) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for step in load_history(HISTORY_DIR)[: upto + 1]:
        files = {p: c for p, c in {**files, **step.files}.items() if p not in step.deletions}
    return files


def make_sandbox(root: Path, files: dict[str, bytes]) -> LocalSandbox:
    python = Path(sys.executable)
    sandbox = LocalSandbox(root, BuiltEnvironment(path=Path(sys.prefix), python=python, bin_dir=python.parent, spec_hash="t"))
    for path, content in files.items():
        sandbox.write_file(path, content)
    return sandbox


def passing(sandbox: LocalSandbox) -> set[str]:
    result = sandbox.exec([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "tests"],
                          env={"PYTHONPATH": "src", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}, timeout=120)  # fmt: skip
    return set(re.findall(r"^PASSED (\S+)", result.stdout, re.MULTILINE))


@pytest.fixture(scope="module")
def targets(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """T: the tests that pass on the oracle."""
    return passing(make_sandbox(tmp_path_factory.mktemp("oracle"), tree(len(load_history(HISTORY_DIR)) - 1)))


@pytest.mark.slow
@pytest.mark.parametrize(("protocol", "max_iterations"), [("openai", 5), ("anthropic", 3)])
def test_the_llm_agents_solve_the_demo_with_the_scripted_model(
    serve, tmp_path: Path, targets: set[str], protocol: str, max_iterations: int
) -> None:
    history = load_history(HISTORY_DIR)
    oracle = tree(len(history) - 1)
    base = {p: c for p, c in tree(0).items() if not p.startswith("tests/")}
    sandbox = make_sandbox(tmp_path / "workspace", {**base, **{p: c for p, c in oracle.items() if p.startswith("tests/")}})

    server = serve(demo_script())
    config = ModelConfig(provider=protocol, model=MODELS[protocol], base_url=server.base_url(protocol), max_retries=0)
    architect, programmer = LLMArchitect(make_chat_model(config)), LLMProgrammer(make_chat_model(config))
    task = TaskSpec(task_id="demo", repo=str(tmp_path), base_ref="base", oracle_ref="oracle")

    passed = passing(sandbox) & targets
    counts = [len(passed)]
    for iteration in range(1, max_iterations + 1):
        failing = sorted(targets - passed)
        if not failing:
            break
        summary = "".join(json.dumps({"test_id": t, "outcome": "failed", "reason": "assert"}) + "\n" for t in failing)
        sandbox.write_file(f"{NON_PASSED_DIR}/summary.jsonl", summary)
        ctx = AgentContext(task=task, iteration=iteration, max_iterations=max_iterations, sandbox=sandbox,
                           source_repo=tmp_path, base_sha="base", oracle_sha="oracle")  # fmt: skip
        outcome = architect.run(ctx)
        assert outcome.status is AgentStatus.OK, outcome.message
        ctx.requirement = sandbox.read_file(REQUIREMENT_FILE).decode()
        assert validate_requirement(ctx.requirement) == [] and failing[0] in ctx.requirement
        outcome = programmer.run(ctx)
        assert outcome.status is AgentStatus.OK, outcome.message
        passed = passing(sandbox) & targets
        counts.append(len(passed))

    assert counts[-1] == len(targets) > counts[0], counts  # solved, from a real gap
    assert counts[1] > counts[0] and len(counts) - 1 <= max_iterations, counts
    assert all(sandbox.read_file(p) == c for p, c in oracle.items())  # the oracle's code, file for file


def test_demo_agent_config_builds_working_llm_agents(serve, ctx: AgentContext, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    server = serve(demo_script())
    outcome = make_llm_agent("architect", demo_agent_config(server, "openai")).run(ctx)
    assert outcome.status is AgentStatus.OK and outcome.calls[0].provider == "openai-compatible"
    assert "tests/test_calc.py::test_add" in ctx.sandbox.read_file(REQUIREMENT_FILE).decode()
