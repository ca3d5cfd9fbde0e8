"""Red team: an agent behind the model gateway reaches its model and nothing else, in both sandboxes.

The probe (``probe.py``) runs as a ``command`` agent with a gateway, placed where users keep CLIs:
a project's ``bin/`` next to evoci's runs, a ``bin/`` in a home, a folder under the temp
directory, the workspace. It reports what it reached, read and found; the real key must be
nowhere (environment, files, ``/proc``), the oracle and the home unreadable, every host port
closed, DNS dead, and its own folder must hold nothing but the probe.
"""

from __future__ import annotations

import json
import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evoci.agents.base import AgentContext, Role
from evoci.agents.command import CommandAgent
from evoci.agents.scripted import ScriptedLLMServer, text
from evoci.domain import AgentConfig, TaskSpec
from evoci.errors import InputError
from evoci.sandbox import bwrap
from evoci.sandbox.environment import BuiltEnvironment
from evoci.sandbox.local import LocalSandbox

KEY = "sk-upstream-REAL-KEY-never-inside-7d3a"
PROBE = Path(__file__).with_name("probe.py")


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedLLMServer]:
    monkeypatch.setenv("GATEWAY_TEST_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # a key in the harness's own environment must not leak either
    with ScriptedLLMServer(lambda protocol, body: text("the model answered")) as server:
        yield server


@pytest.fixture
def host_service() -> Iterator[int]:
    """A loopback service of the host (as the Prefect API is): the agent must not reach it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield listener.getsockname()[1]
    listener.close()


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """A project with evoci's runs inside it (the oracle beside the workspace) and a home."""
    project, home = tmp_path / "project", tmp_path / "home"
    task = project / ".evoci" / "runs" / "run-1" / "task-1"
    (task / "oracle" / "src").mkdir(parents=True)
    (task / "oracle" / "src" / "answer.py").write_text("ANSWER = 42\n")
    (task / "workspace" / "src").mkdir(parents=True)
    (task / "workspace" / "src" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE\n")
    return {"project": project, "home": home, "workspace": task / "workspace",
            "oracle": task / "oracle" / "src" / "answer.py", "tmp": tmp_path / "scratch"}


def place(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "probe"
    shutil.copy(PROBE, target)
    target.chmod(0o755)
    return target


def run_probe(sandbox, program: str, layout: dict[str, Path], upstream: ScriptedLLMServer, ports: list[int]) -> dict:
    gateway = {"provider": "openai", "base_url": upstream.base_url("openai"), "api_key_env": "GATEWAY_TEST_KEY",
               "max_retries": 0}
    argv = [program, KEY[::-1], str(layout["oracle"]), str(layout["home"] / ".ssh" / "id_ed25519"), *map(str, ports)]
    agent = CommandAgent.from_config(Role.PROGRAMMER, AgentConfig(kind="command", options={
        "command": argv, "gateway": gateway, "timeout_s": 120}))
    calls = []
    task = TaskSpec(task_id="task-1", repo=str(layout["project"]), base_ref="b", oracle_ref="o")
    ctx = AgentContext(task=task, iteration=1, max_iterations=2, sandbox=sandbox, source_repo=layout["project"],
                       base_sha="b", oracle_sha="o", on_call=calls.append)
    outcome = agent.run(ctx)
    step = outcome.trajectory[0]
    assert step["exit_code"] == 0, step["stderr_tail"]
    report = json.loads(step["stdout_tail"])
    assert len(calls) == 1 and calls[0].error is None  # the one model call, accounted
    return report


def assert_contained(report: dict, visible: set[str]) -> None:
    assert report["gateway_answer"] == "the model answered"
    assert report["gateway_other_path"] == "HTTPError: 404"
    assert not any(report["host_ports"].values()), report["host_ports"]
    assert (report["other_loopback"], report["dns"], report["outside"]) == (False, False, False)
    assert report["key_hits"] == []
    assert not report["oracle_readable"] and not report["home_file_readable"]
    assert set(report["top"]) <= visible, set(report["top"]) - visible


LOCAL_TOP = {"bin", "dev", "etc", "evoci-gateway", "home", "lib", "lib32", "lib64", "libx32", "opt", "proc", "sbin",
             "tmp", "usr", "workspace"}
# The task's environment (a virtualenv and its base interpreter) is mounted at its host path.
ENVIRONMENT_TOP = {Path(p).parts[1] for p in (sys.prefix, *map(str, bwrap.venv_base(Path(sys.prefix))))}


@pytest.fixture
def local(layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> LocalSandbox:
    if bwrap.available():
        pytest.skip(bwrap.available())
    monkeypatch.setenv("HOME", str(layout["home"]))
    env = BuiltEnvironment(path=Path(sys.prefix), python=Path(sys.executable), bin_dir=Path(sys.executable).parent,
                           spec_hash="test")
    return LocalSandbox(layout["workspace"], env, isolation=bwrap.BwrapOptions())


@pytest.mark.parametrize("where", ["project bin", "home bin", "temp folder"])
def test_a_probe_cli_in_bubblewrap_sees_its_file_the_system_and_the_workspace(
        local, layout, upstream, host_service, where) -> None:
    folder = {"project bin": layout["project"] / "bin", "home bin": layout["home"] / "bin",
              "temp folder": layout["tmp"] / "tools"}[where]
    probe = place(folder)
    (folder / "neighbour.txt").write_text("not the probe's\n")
    report = run_probe(local, str(probe), layout, upstream, [host_service, int(upstream.url.rsplit(":", 1)[1])])
    assert_contained(report, LOCAL_TOP | ENVIRONMENT_TOP | {folder.parts[1]})
    assert report["own_folder"] == ["probe"]  # not its neighbours: the folder is not an installation


def test_a_probe_in_the_workspace_runs_by_its_relative_path(local, layout, upstream, host_service) -> None:
    place(layout["workspace"] / "tools")
    report = run_probe(local, "tools/probe", layout, upstream, [host_service])
    assert_contained(report, LOCAL_TOP | ENVIRONMENT_TOP)


def test_a_relative_program_missing_from_the_workspace_is_refused(local, layout, upstream) -> None:
    place(layout["project"] / "bin")
    with pytest.raises(InputError, match="relative path, looked up in the workspace"):
        run_probe(local, "bin/probe", layout, upstream, [])


def test_an_installation_that_holds_the_runs_or_a_home_is_refused(local, layout, upstream) -> None:
    for folder in (layout["project"], layout["home"]):
        sandbox = LocalSandbox(layout["workspace"], local.environment,
                               isolation=bwrap.BwrapOptions(ro_paths=(str(folder),)))
        with pytest.raises(InputError, match="cannot be mounted into the sandbox"):
            run_probe(sandbox, "/bin/true", layout, upstream, [])


@pytest.mark.docker
def test_a_probe_in_a_docker_sandbox_reaches_only_the_gateway(layout, upstream, host_service) -> None:
    from evoci.domain import EnvironmentSpec, SandboxConfig
    from evoci.sandbox.docker import open_docker_sandbox
    from evoci.settings import Paths

    try:
        sandbox = open_docker_sandbox(SandboxConfig(kind="docker", options={"memory": "512m"}), layout["workspace"],
                                      EnvironmentSpec(), Paths(home=layout["project"] / ".evoci"))
    except Exception as exc:  # noqa: BLE001 - no engine or no base image here
        pytest.skip(f"no Docker sandbox: {exc}")
    try:
        place(layout["workspace"] / "tools")
        report = run_probe(sandbox, "tools/probe", layout, upstream, [host_service])
    finally:
        sandbox.cleanup()
    assert_contained(report, set(report["top"]) - {"workspace"} | {"workspace"})
    assert "evoci-gateway" in report["top"] and report["own_folder"] == ["probe"]
