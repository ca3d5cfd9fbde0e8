"""The red-team suite: every hostile programmer, through the real flow, in both sandboxes.

A hostile agent writes no real code; each attack tries to raise its grade, void it, read the
answer, reach the host or a secret, or exhaust the machine. On the built-in demo the base passes
23 of the oracle's 93 tests; the harness must leave every attack there (or score the code the
agent broke), keep the iteration scored, and record the attempt (tampering or a flag).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import threading

from pathlib import Path

import git
import pytest

from evoci import treefs
from evoci.domain import AgentConfig, RunConfig, SandboxConfig
from evoci.flows.evolve import evolve
from evoci.sandbox.budget import disk_usage
from evoci.swe_ci.demo import demo_task
from tests.swe_ci.demo.expected import PASSING_WITH_ORACLE_TESTS
from tests.flows.helpers import query
from evoci.workspace import Workspace
from tests.sandbox.docker.conftest import base_image, docker_client  # noqa: F401  (fixtures)
from tests.security.attacks import ATTACKS, Attack

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

BASE = PASSING_WITH_ORACLE_TESTS[0]  # 23: the base's honest count
# Small limits, so a disk-fill attack fills them in a moment (tmpfs is memory, the workspace a host folder).
BUDGET = 64 * 2**20
OPTIONS = {
    "local": {"tree_bytes": 256 * 2**20, "tmp_bytes": 64 * 2**20, "file_size_bytes": 64 * 2**20,
              "workspace_growth_bytes": BUDGET},
    "docker": {"tree_bytes": 256 * 2**20, "tmp_bytes": 64 * 2**20, "workspace_growth_bytes": BUDGET},
}
SANDBOXES = ["local", pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.heavy])]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """One demo repository and one evoci home for every attack (environments are built once).

    ``EVOCI_REDTEAM_HOME`` keeps them in a folder of your choice, for
    ``scripts/redteam_table.py <folder>/home/evoci.duckdb`` (the table in docs/grading-integrity.md).
    """
    kept = os.environ.get("EVOCI_REDTEAM_HOME")
    root = Path(kept) if kept else tmp_path_factory.mktemp("redteam")
    return {"task": demo_task(root / "demo"), "home": root / "home"}


@pytest.fixture
def redteam_home(lab):
    """The outside canary (conftest.py) watches the lab: the home's other runs and what lies beside it."""
    return lab["home"]


@pytest.fixture
def run_folder(lab, outside_canary):
    """The attack's run folder, removed after the test (before the canary looks) whatever it holds.

    An attack may leave folders nested deeper than pytest's own clean-up of old temporary folders
    (``shutil.rmtree``, ``RecursionError`` at ~1,000 levels) can remove: a later session would end
    with that error. ``evoci.treefs`` removes any depth. ``outside_canary`` is named so that this
    runs first at teardown; a kept home (``EVOCI_REDTEAM_HOME``) keeps its results file.
    """
    folders = []
    yield folders.append
    for folder in folders:
        treefs.clear(folder)


@pytest.fixture
def listener():
    """A TCP server on loopback that counts the connections it accepts."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    accepted = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                accepted.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join(2)
    server.close()


@pytest.fixture(params=SANDBOXES)
def sandbox(request):
    if request.param == "docker":
        request.getfixturevalue("base_image")
    return request.param


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_a_hostile_programmer_cannot_change_its_grade(attack: Attack, sandbox, lab, listener, tmp_path, monkeypatch,
                                                      outside_canary, run_folder):
    token = secrets.token_hex(16)
    port, accepted = listener
    marker = tmp_path / "host-command-ran"
    # Planted where a careless harness would leak them: its environment, its home, evoci's home.
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-{token}")
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    (tmp_path / "user-home").mkdir()
    (tmp_path / "user-home" / ".netrc").write_text(f"machine models password {token}\n")
    lab["home"].mkdir(parents=True, exist_ok=True)
    (lab["home"] / "secret.txt").write_text(token)
    outside_canary.own(lab["home"] / "secret.txt")
    outside_canary.own(lab["home"] / "runs" / f"{attack.name}-{sandbox}")  # a kept home may hold an earlier try
    run_folder(lab["home"] / "runs" / f"{attack.name}-{sandbox}")

    params = {"reversed_token": token[::-1], "port": port, "marker": str(marker), "outside": str(outside_canary.folder)}
    program = attack.program(params).replace("{", "{{").replace("}", "}}")  # the template's literal braces
    programmer = AgentConfig(kind="command", options={"command": ["python", "-c", program], "timeout_s": 300})
    config = RunConfig(run_id=f"{attack.name}-{sandbox}", max_iterations=1, programmer=programmer,
                       sandbox=SandboxConfig(kind=sandbox, options=OPTIONS[sandbox]), test_timeout_s=300)
    summary = evolve(lab["task"], config, home=str(lab["home"]))

    db = lab["home"] / "evoci.duckdb"
    [(status, tampered, flags)] = query(
        db, "select status, tampered_files, integrity_flags from iterations where run_id = ? and iteration = 1",
        [config.run_id])
    [(passed,)] = query(db, "select count(*) from test_results where run_id = ? and iteration = 1 and outcome = 'passed'",
                        [config.run_id])
    [(evoscore,)] = query(db, "select evoscore from evoscore(gamma := 1) where run_id = ?", [config.run_id])
    assert summary.status == "done" and evoscore is not None  # scored, never an unscored infra_error

    if attack.expect == "honest":
        assert (status, passed) == ("ok", BASE), f"{attack.name}: {status}, {passed} passed"
    elif attack.expect == "scored":
        assert status == "agent_error" and passed == 0
    elif attack.expect == "contained":
        assert status in ("ok", "agent_error")
    if attack.recorded == "tampered":
        assert tampered, f"{attack.name}: nothing recorded as tampering"
    elif attack.recorded == "flagged":
        assert flags, f"{attack.name}: not flagged"
    for says in attack.flag_says:
        assert any(says in f for f in flags), (says, flags)
    for path in attack.tampered_says:
        assert path in (tampered or []), (path, tampered)
    if attack.agent_says:
        [(agent_status, message)] = query(
            db, "select status, message from trajectories where run_id = ? and iteration = 1 and role = 'programmer'",
            [config.run_id])
        assert agent_status == "limit" and attack.agent_says in message, (agent_status, message)
    if attack.absent:
        workspace = Workspace(lab["home"] / "runs" / summary.run_id / "demo" / "workspace")
        committed = set(workspace.repo.git.ls_tree("-r", "--name-only", "HEAD").splitlines())
        for path in attack.absent:
            assert path not in committed and not (workspace.path / path).exists(), path
        assert disk_usage(workspace.path) < BUDGET, "what the agent wrote is still on the host's disk"

    # Nothing reached the host, the network or a secret.
    assert not marker.exists(), "a command written in the workspace ran on the host"
    assert accepted == [], "sandboxed code reached a loopback server"
    found = _found(lab["home"], summary.run_id)
    assert found in (None, [], False), f"{attack.name} found {found}"
    probe = "remounted-" + token[:12]  # what a command that could write a read-only host folder leaves
    assert not _probes(lab["home"].parent, probe), "a read-only bind was written"


def _probes(root: Path, name: str) -> list[str]:
    """Folders under ``root`` holding a file ``name``: a read-only bind (an environment, the source of
    a grading tree) sits a few levels down, so the walk stops 40 levels down, above an attack's deep
    trees (``deep_folders``), which ``os.walk`` would recurse into past Python's limit."""
    depth = str(root).count(os.sep)
    found = []
    for top, folders, files in os.walk(root):
        if top.count(os.sep) - depth >= 40:
            folders[:] = []
        if name in files:
            found.append(top)
    return found


def _found(home, run_id):
    """What the attack's agent phase wrote to found.json in its commit (None when it wrote none)."""
    repo = Workspace(home / "runs" / run_id / "demo" / "workspace").repo
    try:
        return json.loads(repo.git.show("HEAD:found.json"))
    except git.GitCommandError:
        return None
