"""No leak: an agent at step k of a multi-step probe finds no later TASK, no spec, no evaluator.

A hostile command agent searches every file it can reach through what the harness hands it
(its workspace, and the folder the workspace sits in) by name and by content. The rest of
the file system is the sandbox's to hide (bubblewrap or Docker mount only the workspace);
this test pins that evoci itself puts nothing hidden in reach, at every step, with the
diagnostic grading of earlier steps switched on.
"""

from __future__ import annotations

import json

import pytest

from evoci.domain import AgentConfig, RunConfig, SandboxConfig
from evoci.flows.nitr import nitr
from tests.flows.helpers import query
from tests.sandbox.docker.conftest import base_image, docker_client  # noqa: F401  (fixtures)

pytestmark = pytest.mark.usefixtures("prefect_server")

HOSTILE = r"""
import json, os, sys
step = int(sys.argv[1])
# by name: later TASK files, the spec, the design matrix, the probe's test program
names = {"SPEC.md", "design_matrix.md", "test_formats.py"} | {f"TASK{k}.md" for k in range(step + 1, 10)}
# by content: the spec's wording, the evaluator's module names, later TASK texts
markers = ["grows an if/elif chain", "report_closed_for_modification", "no_format_branches"]
markers += {1: ["Dashboards want reports as JSON", "Add a `markdown` format"], 2: ["Add a `markdown` format"]}.get(step, [])
found, seen = [], 0
for root in (".", ".."):
    for here, dirs, files in os.walk(root):
        if os.path.abspath(here) == "/":  # the whole file system (a sandbox's or a container's root):
            # skip kernel pseudo-files and the read-only system (the host's /usr under bubblewrap,
            # gigabytes that evoci never writes to)
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr")]
        for name in files:
            path = os.path.join(here, name)
            seen += 1
            if name in names:
                found.append(path)
            try:  # evoci's TASK, spec and evaluator files are small: read what could be one
                if os.path.getsize(path) > 256 * 1024:
                    continue
                text = open(path, "rb").read().decode("utf-8", "replace")
            except OSError:
                continue
            found += [f"{path}: {m}" for m in markers if m in text]
found = sorted(set(found))
print(json.dumps({"step": step, "files_searched": seen, "found": found[:30], "n_found": len(found)}))
"""


def hostile_config(sandbox: SandboxConfig) -> RunConfig:
    # The script travels in an environment variable: command templates are str.format()ted.
    run_script = "import os; exec(os.environ['HOSTILE'])"
    agent = AgentConfig(kind="command", options={"command": ["python", "-c", run_script, "{iteration}"],
                                                 "env": {"HOSTILE": HOSTILE}, "timeout_s": 300})
    return RunConfig(run_id="leak", protocol="nitr", programmer=agent, architect=agent, grade_every_step=True,
                     node_retries=0, sandbox=sandbox)


@pytest.mark.slow
def test_a_hostile_agent_finds_no_later_task_spec_or_evaluator(tmp_path):
    assert_nothing_found(tmp_path, SandboxConfig())


@pytest.mark.slow
@pytest.mark.docker
def test_in_docker_the_hostile_agent_searches_the_whole_file_system_and_finds_nothing(tmp_path, base_image):
    """In a container the workspace's parent is the root: the walk covers every file the agent can see."""
    assert_nothing_found(tmp_path, SandboxConfig(kind="docker"), at_least=1000)


def assert_nothing_found(tmp_path, sandbox: SandboxConfig, at_least: int = 5) -> None:
    config = hostile_config(sandbox)
    db = tmp_path / "results.duckdb"
    nitr("builtin", config, select={"id": ["004"]}, home=str(tmp_path / "home"), db=str(db))
    rows = query(db, "select iteration, status, trajectory from trajectories where run_id = 'leak' order by iteration")
    assert [(step, status) for step, status, _ in rows] == [(1, "ok"), (2, "ok"), (3, "ok")]
    for step, _, trajectory in rows:
        step_record = json.loads(trajectory)[0]
        assert step_record["stdout_tail"].startswith("{"), step_record["stdout_tail"][:1500]
        report = json.loads(step_record["stdout_tail"])
        assert report["step"] == step
        assert report["files_searched"] > at_least  # it did search: the starter code and its own prompt (or more)
        assert report["found"] == []
    # every step was graded (the diagnostic), and the prompt held only the step's own TASK
    assert query(db, "select count(*) from iterations where run_id = 'leak' and status = 'ok'") == [(3,)]
    prompt = (tmp_path / "home").rglob("prompt.md")
    assert list(prompt) == []  # the harness removes its prompt file before committing
