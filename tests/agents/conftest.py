"""Fixtures: a real LocalSandbox over a small project, a scripted model server, configs."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evoci.agents.base import NON_PASSED_DIR, AgentContext
from evoci.agents.llm.config import ModelConfig
from evoci.agents.scripted import ScriptedLLMServer
from evoci.domain import TaskSpec
from evoci.sandbox.environment import BuiltEnvironment
from evoci.sandbox.local import LocalSandbox

API_KEY = "sk-test-DO-NOT-LEAK-4f1c9e"
MODELS = {"openai": "gpt-4o", "anthropic": "claude-sonnet-4-5"}

PROJECT = {
    "src/calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    f"{NON_PASSED_DIR}/summary.jsonl": '{"test_id": "tests/test_calc.py::test_add", "outcome": "failed", "reason": "assert -1 == 5"}\n',
}


@pytest.fixture(params=["openai", "anthropic"])
def protocol(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def sandbox(tmp_path: Path) -> LocalSandbox:
    workspace = tmp_path / "workspace"
    for path, content in PROJECT.items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(content)
    venv = Path(sys.prefix)
    env = BuiltEnvironment(path=venv, python=Path(sys.executable), bin_dir=Path(sys.executable).parent, spec_hash="test")
    return LocalSandbox(workspace, env)


@pytest.fixture
def ctx(sandbox: LocalSandbox, tmp_path: Path) -> AgentContext:
    task = TaskSpec(task_id="calc", repo=str(tmp_path), base_ref="base", oracle_ref="oracle")
    return AgentContext(task=task, iteration=1, max_iterations=5, sandbox=sandbox, source_repo=tmp_path,
                        base_sha="base", oracle_sha="oracle")  # fmt: skip


@pytest.fixture(autouse=True)
def api_keys(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    return API_KEY


@pytest.fixture
def serve() -> Iterator[Callable[..., ScriptedLLMServer]]:
    """Start a ScriptedLLMServer for a script; stopped after the test."""
    servers: list[ScriptedLLMServer] = []

    def start(script, **kwargs) -> ScriptedLLMServer:
        servers.append(ScriptedLLMServer(script, **kwargs).start())
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def config_for(server: ScriptedLLMServer, protocol: str, **overrides) -> ModelConfig:
    """A config pointing the real SDK of ``protocol`` at ``server``, with quick retries."""
    settings = {"provider": protocol, "model": MODELS[protocol], "base_url": server.base_url(protocol),
                "max_retries": 2, "retry_backoff_s": 0.05, "timeout_s": 10, **overrides}  # fmt: skip
    return ModelConfig(**settings)
