"""SWE-CI's red team replayed against the shared SWE-bench grader, through the real ``swe_evo`` flow.

Every attack on the grade in ``tests.security.attacks`` (the runner's configuration, voiding the
score, in-process sabotage, forging the report, runner look-alikes, names the harness's tools
choke on, ``.gitattributes``) is run by a SWE-EVO agent in the demo's first instance, with the
package it appends to renamed. The agent implements nothing, so whatever it does, the instance
must stay unresolved, be scored (never an unscored environment or infrastructure error), and
show the attempt where SWE-CI's iteration shows it (``tampered_files`` or ``integrity_flags``).

SWE-Bench-CL grades with the same grader (``evoci.swebench.grade``); its own red-team tests are in
``test_swe_bench_cl_attacks.py``. The default run replays four (the private channel, runner
look-alikes, a planted repository, a link at the harness's folder) in the local sandbox;
``EVOCI_TEST_ALL=1`` replays them all, in both sandboxes.
"""

from __future__ import annotations

import json

import pytest

from evoci.domain import AgentConfig, RunConfig, SandboxConfig
from evoci.flows.swe_evo import swe_evo
from tests.conftest import FULL_MATRIX
from tests.flows.helpers import query
from tests.sandbox.docker.conftest import base_image, docker_client  # noqa: F401  (fixtures)
from tests.security.attacks import ATTACKS, Attack

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

INSTANCE = "kvconf_0.1.0_0.2.0"
# Attacks on containment, not on the grade (network, secrets, the answer, exhausting the sandbox):
# the agent sandbox they attack is SWE-CI's too, and their own tests judge them by what did not happen.
CONTAINMENT = {"read_the_answer_and_other_runs", "secrets", "network_egress", "fork_bomb", "disk_fill", "huge_output",
               "agent_disk_fill"}
DEFAULT = {"forged_frame", "compiled_runner_shadow", "git_hooks_and_fsmonitor", "harness_dir_link"}
# SWE-CI's test sees the rewritten report disagree with the tally; in this instance no test the
# report could rewrite runs (every target's file imports what the release adds, so none collects
# without it), and the flag that shows is the replaced function itself.
REPLAYED_FLAGS = {"stdlib_report_rewrite": ("replaced json.dump",)}
# SWE-CI restores its whole tests folder after the programmer, so the file the agent leaves at the
# bottom of ``tests/`` is recorded there; a SWE-EVO prediction keeps the test files it adds (as the
# official harness does) and the grader puts back only those of the base and the test_patch.
REPLAYED_TAMPERED = {"deep_folders": tuple(p for a in ATTACKS if a.name == "deep_folders" for p in a.tampered_says
                                           if not p.startswith("tests/"))}
REPLAYED = [a for a in ATTACKS if a.name not in CONTAINMENT and (FULL_MATRIX or a.name in DEFAULT)]


SANDBOXES = ["local", pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.heavy])]


@pytest.fixture(params=SANDBOXES)
def sandbox(request) -> SandboxConfig:
    if request.param == "docker":
        request.getfixturevalue("base_image")
    return SandboxConfig(kind=request.param)


@pytest.fixture(scope="module")
def one_instance(tmp_path_factory):
    from evoci.swe_evo.demo import build_swe_evo_demo

    dataset = build_swe_evo_demo(tmp_path_factory.mktemp("swe-evo-demo"))
    [record] = [r for r in json.loads(dataset.read_text()) if r["instance_id"] == INSTANCE]
    one = dataset.parent / "one-instance.json"
    one.write_text(json.dumps([record]))
    return one


@pytest.mark.parametrize("attack", REPLAYED, ids=[a.name for a in REPLAYED])
def test_a_swe_evo_agent_attacking_the_grader_resolves_nothing_and_is_recorded(attack: Attack, sandbox, one_instance,
                                                                              tmp_path):
    program = attack.program({"reversed_token": "x", "port": 9, "marker": str(tmp_path / "marker"),
                              "outside": str(tmp_path / "outside")}).replace("semverkit", "kvconf")
    # The program travels in the environment: command templates are str.format()ted.
    agent = AgentConfig(kind="command", options={"command": ["python", "-c", "import os; exec(os.environ['HOSTILE'])"],
                                                 "env": {"HOSTILE": program}, "timeout_s": 300})
    config = RunConfig(protocol="swe-evo", programmer=agent, run_id=f"grader-{attack.name}-{sandbox.kind}",
                       sandbox=sandbox, test_timeout_s=300)
    [summary, *_] = swe_evo(str(one_instance), config, home=str(tmp_path / "home"))
    db = tmp_path / "home" / "evoci.duckdb"

    rows = query(db, "select task_status, resolved, flags from swe_evo_instances where run_id = ?", [summary.run_id])
    [(tampered, flags)] = query(
        db, "select tampered_files, integrity_flags from iterations where run_id = ? and iteration = 1", [summary.run_id])
    described = f"{attack.name}: {rows}, tampered {tampered}, flags {flags}"
    # Scored and unresolved: never resolved by the attack, never turned into an unscored instance.
    [(task_status, resolved, instance_flags)] = rows
    assert (task_status, resolved) == ("done", False), described
    assert not {"infra_error", "environment_error", "unfinished"} & set(instance_flags), described
    assert not (tmp_path / "marker").exists(), "a command written in the workspace ran on the host"
    if attack.recorded == "tampered":
        assert tampered, described
    elif attack.recorded == "flagged":
        assert flags, described
    for says in REPLAYED_FLAGS.get(attack.name, attack.flag_says):
        assert any(says.replace("semverkit", "kvconf") in f for f in flags), (says, described)
    for path in REPLAYED_TAMPERED.get(attack.name, attack.tampered_says):
        assert path.replace("semverkit", "kvconf") in (tampered or []), (path, described)
