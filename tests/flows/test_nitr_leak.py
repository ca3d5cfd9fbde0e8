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

from evoci.domain import AgentConfig, RunConfig
from evoci.flows.nitr import nitr
from tests.flows.helpers import query

pytestmark = pytest.mark.usefixtures("prefect_server")

HOSTILE = r"""
import json, os, sys
step = int(sys.argv[1])
names = {"SPEC.md", "pipeline.json", "design_matrix.md", "test_formats.py", "expected.json"}
names |= {f"TASK{k}.md" for k in range(step + 1, 10)}
folders = {"evaluator", "references", "docs", "grading"}
markers = ["grows an if/elif chain", "module_name", "no_format_branches"]
markers += {2: ["Dashboards want reports as JSON"], 3: ["Add a `markdown` format"]}.get(step + 1, [])
markers += ["Add a `markdown` format"] if step == 1 else []
found, seen = [], 0
for root in (".", ".."):
    for here, dirs, files in os.walk(root):
        found += [os.path.join(here, d) for d in dirs if d in folders]
        for name in files:
            path = os.path.join(here, name)
            seen += 1
            if name in names:
                found.append(path)
            try:
                text = open(path, "rb").read().decode("utf-8", "replace")
            except OSError:
                continue
            found += [f"{path}: {m}" for m in markers if m in text]
print(json.dumps({"step": step, "files_searched": seen, "found": sorted(set(found))}))
"""


@pytest.mark.slow
def test_a_hostile_agent_finds_no_later_task_spec_or_evaluator(tmp_path):
    # The script travels in an environment variable: command templates are str.format()ted.
    run_script = "import os; exec(os.environ['HOSTILE'])"
    agent = AgentConfig(kind="command", options={"command": ["python", "-c", run_script, "{iteration}"],
                                                 "env": {"HOSTILE": HOSTILE}, "timeout_s": 120})
    config = RunConfig(run_id="leak", protocol="nitr", programmer=agent, architect=agent, grade_every_step=True,
                       node_retries=0)
    db = tmp_path / "results.duckdb"
    nitr("builtin", config, select={"id": ["004"]}, home=str(tmp_path / "home"), db=str(db))
    rows = query(db, "select iteration, status, trajectory from trajectories where run_id = 'leak' order by iteration")
    assert [(step, status) for step, status, _ in rows] == [(1, "ok"), (2, "ok"), (3, "ok")]
    for step, _, trajectory in rows:
        report = json.loads(json.loads(trajectory)[0]["stdout_tail"])
        assert report["step"] == step
        assert report["files_searched"] > 5  # it did search: the starter code and its own prompt
        assert report["found"] == []
    # every step was graded (the diagnostic), and the prompt held only the step's own TASK
    assert query(db, "select count(*) from iterations where run_id = 'leak' and status = 'ok'") == [(3,)]
    prompt = (tmp_path / "home").rglob("prompt.md")
    assert list(prompt) == []  # the harness removes its prompt file before committing
