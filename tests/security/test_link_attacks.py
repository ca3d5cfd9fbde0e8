"""Links (and special files) where the harness writes, through the SWE-EVO, SWE-Bench-CL and NITR flows.

Every grader writes into a tree the agent's work shaped: the SWE-bench grader its runner
configuration (``.evoci-pytest.ini``) and report folder (``.evoci``), restored test files; the
NITR step node its prompt (``.evoci/prompt.md``). An agent that plants a link there aimed at the
host (the outside canary beside evoci's home, ``conftest.py``) must find nothing written through
it, its work graded as its own, and the link recorded as tampering.
"""

from __future__ import annotations

import json
import os
import shutil

import git
import pytest

from evoci.domain import AgentConfig, RunConfig, SandboxConfig
from evoci.flows.continual import continual
from evoci.flows.nitr import nitr
from evoci.flows.swe_evo import swe_evo
from evoci.swe_bench_cl.embedding import EmbeddingConfig
from tests.flows.helpers import query
from tests.patches import patch_by
from tests.sandbox.docker.conftest import base_image, docker_client  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

SANDBOXES = ["local", pytest.param("docker", marks=pytest.mark.docker)]
# A command agent's script travels in its environment: command templates are str.format()ted.
RUN_SCRIPT = "import os; exec(os.environ['HOSTILE'])"


@pytest.fixture(params=SANDBOXES)
def sandbox(request) -> SandboxConfig:
    if request.param == "docker":
        request.getfixturevalue("base_image")
    return SandboxConfig(kind=request.param)


def hostile(script: str) -> AgentConfig:
    return AgentConfig(kind="command", options={"command": ["python", "-c", RUN_SCRIPT],
                                                "env": {"HOSTILE": script}, "timeout_s": 300})


def test_swe_evo_predictions_with_links_where_the_grader_writes_are_graded_and_recorded(
        sandbox, tmp_path, redteam_home, outside_canary):
    from evoci.swe_evo.demo import build_swe_evo_demo

    dataset = build_swe_evo_demo(tmp_path / "demo")
    records = {r["instance_id"]: r for r in json.loads(dataset.read_text())}
    source = git.Repo(dataset.parent / next(iter(records.values()))["repo_path"])

    def runner_config(tree):  # the runner configuration the grader writes, a link to a host file
        os.symlink(outside_canary.file, tree / ".evoci-pytest.ini")

    def report_folder(tree):  # the folder the grader's report goes to, a link to a host folder
        os.symlink(outside_canary.folder, tree / ".evoci")
        (tree / "README.md").rename(tree / "src" / "pytest.py")  # a pure rename: no "+++" line for the scan

    def tests_folder(tree):  # the tests the grader restores, a link to a host folder
        shutil.rmtree(tree / "tests")
        os.symlink(outside_canary.folder, tree / "tests")

    attacks = {"kvconf_0.1.0_0.2.0": (runner_config, ".evoci-pytest.ini"),
               "kvconf_0.2.0_0.3.0": (report_folder, ".evoci"),
               "kvconf_0.3.0_0.3.1": (tests_folder, "tests")}
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({
        i: {"model_name_or_path": "hostile",
            "model_patch": patch_by(source, records[i]["base_commit"], change, tmp_path / f"scratch-{i}")}
        for i, (change, _) in attacks.items()}))
    config = RunConfig(protocol="swe-evo", programmer=AgentConfig(kind="predictions", options={"path": str(preds)}),
                       sandbox=sandbox, test_timeout_s=300)
    [summary, *_] = swe_evo("swe-evo-demo", config, home=str(redteam_home))
    db = redteam_home / "evoci.duckdb"
    rows = query(db, "select task_id, patch_applied, resolved from swe_evo_instances where run_id = ? order by task_id",
                 [summary.run_id])
    assert rows == [(i, True, False) for i in sorted(attacks)]  # graded, as the agent's own (unresolved) work
    recorded = dict(query(db, "select task_id, tampered_files from iterations where run_id = ?", [summary.run_id]))
    for instance, (_, link) in attacks.items():
        assert link in recorded[instance], (instance, recorded[instance])
    [(flags,)] = query(db, "select integrity_flags from iterations where run_id = ? and task_id = 'kvconf_0.2.0_0.3.0'",
                       [summary.run_id])
    assert any(f.startswith("src/pytest.py: shadows the module 'pytest'") for f in flags), flags
    # and the canaries beside the home are untouched (the outside_canary fixture checks every file)


def test_a_swe_bench_cl_agent_linking_the_runner_configuration_out_is_graded_and_recorded(
        sandbox, tmp_path, redteam_home, outside_canary):
    from evoci.swe_bench_cl.demo import build_cl_demo

    curriculum = json.loads(build_cl_demo(tmp_path / "swe-bench-cl-demo").read_text())
    sequence = curriculum["sequences"][0]
    sequence["tasks"], sequence["num_tasks"] = sequence["tasks"][:1], 1  # one issue: two attempts, a(0,1) and a(1,1)
    sequence["repo_path"] = str(tmp_path / "swe-bench-cl-demo" / sequence["repo_path"])
    path = tmp_path / "one-issue.json"
    path.write_text(json.dumps(curriculum))
    agent = hostile(f"import os\nos.symlink({str(outside_canary.file)!r}, '.evoci-pytest.ini')\n")
    config = RunConfig(protocol="swe-bench-cl", programmer=agent, sandbox=sandbox, test_timeout_s=300)
    [summary] = continual(str(path), config, matrix="core", home=str(redteam_home),
                          embedding=EmbeddingConfig(kind="hashing"))
    db = redteam_home / "evoci.duckdb"
    rows = query(db, "select status, tampered_files from iterations where run_id = ?", [summary.run_id])
    assert len(rows) == 2 and all(status == "ok" and ".evoci-pytest.ini" in tampered for status, tampered in rows), rows
    assert query(db, "select count(*) from failures where run_id = ?", [summary.run_id]) == [(0,)]


NITR_HOSTILE = """
import os, pathlib, shutil
outside = {outside!r}
ws = pathlib.Path.cwd()
if not (ws / "leak.txt").is_symlink():
    os.symlink(outside + "/results.json", ws / "leak.txt")  # a link out of the tree, committed
shutil.rmtree(ws / ".evoci", ignore_errors=True)
if not (ws / ".evoci").is_symlink():
    os.symlink(outside, ws / ".evoci")  # where the next step's prompt is written
"""


def test_a_nitr_agent_linking_the_harness_folder_out_is_graded_and_recorded(sandbox, redteam_home, outside_canary):
    agent = hostile(NITR_HOSTILE.format(outside=str(outside_canary.folder)))
    config = RunConfig(run_id=f"links-{sandbox.kind}", protocol="nitr", programmer=agent, architect=agent,
                       grade_every_step=True, node_retries=0, sandbox=sandbox)
    db = redteam_home / "evoci.duckdb"
    nitr("builtin", config, select={"id": ["004"]}, home=str(redteam_home), db=str(db))
    rows = query(db, "select iteration, status, tampered_files from iterations where run_id = ? order by iteration",
                 [config.run_id])
    assert [(step, status) for step, status, _ in rows] == [(1, "ok"), (2, "ok"), (3, "ok")], rows
    assert all({".evoci", "leak.txt"} <= set(tampered) for _, _, tampered in rows), rows
    assert query(db, "select count(*) from failures where run_id = ?", [config.run_id]) == [(0,)]
