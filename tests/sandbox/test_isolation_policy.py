"""Which sandbox a run gets: isolated for model-driven agents, or refused with what to do."""

from __future__ import annotations

import pytest

from evoci.domain import AgentConfig, RunConfig, SandboxConfig
from evoci.errors import InputError
from evoci.runtime import RunContext
from evoci.sandbox import bwrap


@pytest.fixture
def no_bubblewrap(monkeypatch):
    monkeypatch.setattr(bwrap, "available", lambda: "bubblewrap is not installed (Debian: apt-get install bubblewrap)")


def test_a_command_agent_is_refused_when_nothing_can_isolate_it(no_bubblewrap, tmp_path):
    config = RunConfig(programmer=AgentConfig(kind="command", options={"command": ["true"]}))
    with pytest.raises(InputError, match=r"agents of kind command need an isolated sandbox.*--sandbox docker.*--sandbox host"):
        RunContext.create(config, "demo", home=str(tmp_path))


def test_the_replay_agent_falls_back_to_the_host_sandbox_and_the_run_says_so(no_bubblewrap, tmp_path):
    run = RunContext.create(RunConfig(), "demo", home=str(tmp_path))
    assert run.config.sandbox.kind == "host"
    assert "bubblewrap is not installed" in run.config.sandbox.options["unisolated_because"]
    assert run.run_id != RunContext.create(RunConfig(sandbox=SandboxConfig(kind="docker")), "demo", home=str(tmp_path)).run_id


def test_an_explicit_host_sandbox_is_kept_and_docker_is_never_changed(no_bubblewrap, tmp_path):
    explicit = RunConfig(sandbox=SandboxConfig(kind="host"), programmer=AgentConfig(kind="command", options={"command": ["true"]}))
    assert RunContext.create(explicit, "demo", home=str(tmp_path)).config.sandbox == SandboxConfig(kind="host")
    docker = RunConfig(sandbox=SandboxConfig(kind="docker"), programmer=AgentConfig(kind="llm", model="m"))
    assert RunContext.create(docker, "demo", home=str(tmp_path)).config.sandbox.kind == "docker"


def test_with_bubblewrap_the_local_sandbox_is_kept(tmp_path):
    assert bwrap.available() is None, "these tests need bubblewrap (scripts/bwrap.sh installs it)"
    config = RunConfig(programmer=AgentConfig(kind="command", options={"command": ["true"]}))
    assert RunContext.create(config, "demo", home=str(tmp_path)).config.sandbox.kind == "local"
