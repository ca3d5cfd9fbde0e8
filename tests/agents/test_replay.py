"""The human-replay agent and the architect's input folder, on a real workspace."""

from __future__ import annotations

import json
from pathlib import Path

import git

from evoci.agents.base import REQUIREMENT_FILE, AgentContext, AgentStatus
from evoci.agents.non_passed import non_passed, write_non_passed
from evoci.agents.replay import ReplayArchitect, ReplayProgrammer
from evoci.agents.requirement import parse_requirements, validate_requirement
from evoci.domain import EnvironmentSpec, TaskSpec, TestReport, TestStatus
from evoci.sandbox.environment import LocalEnvironments
from evoci.sandbox.local import LocalSandbox
from tests.repos import calc_repo

REPORT = TestReport(
    status=TestStatus.AGENT_ERROR,
    outcomes={"tests/test_a.py::test_ok": "passed", "tests/test_a.py::test_bad": "failed",
              "tests/test_b.py::test_err": "error"},
    details={"tests/test_a.py::test_bad": "def test_bad():\n>       assert f() == 2\nE       assert 1 == 2\nE  Use -v to get more diff",
             "tests/test_b.py::test_err": "E   fixture 'db' not found"},
    collection_errors={"tests/test_c.py": "E   ImportError: cannot import name 'g' from 'calc'"},
)
TARGETS = ["tests/test_a.py::test_ok", "tests/test_a.py::test_bad", "tests/test_b.py::test_err", "tests/test_c.py::test_g"]


def test_non_passed_lists_errors_then_failures_then_missing_with_one_line_reasons():
    items = non_passed(REPORT, TARGETS)
    assert [(i.test_id, i.outcome, i.reason) for i in items] == [
        ("tests/test_b.py::test_err", "error", "fixture 'db' not found"),
        ("tests/test_a.py::test_bad", "failed", "assert 1 == 2"),
        ("tests/test_c.py::test_g", "missing", "ImportError: cannot import name 'g' from 'calc'"),
    ]


def sandbox_over(tmp_path: Path) -> LocalSandbox:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return LocalSandbox(workspace, LocalEnvironments(tmp_path / "envs").ensure(EnvironmentSpec()))


def test_the_replay_architect_writes_a_valid_requirement_from_the_non_passed_folder(tmp_path):
    sandbox = sandbox_over(tmp_path)
    write_non_passed(sandbox, REPORT, TARGETS)
    summary = [json.loads(line) for line in (sandbox.workspace / ".evoci/non-passed/summary.jsonl").read_text().splitlines()]
    assert [s["test_id"] for s in summary] == ["tests/test_b.py::test_err", "tests/test_a.py::test_bad", "tests/test_c.py::test_g"]
    assert all(not Path(s["detail"]).is_absolute() and (sandbox.workspace / s["detail"]).is_file() for s in summary)
    task = TaskSpec(task_id="t", repo=str(tmp_path), base_ref="a", oracle_ref="b")
    ctx = AgentContext(task=task, iteration=1, max_iterations=5, sandbox=sandbox, source_repo=tmp_path,
                       base_sha="a", oracle_sha="b")
    outcome = ReplayArchitect().run(ctx)
    xml = sandbox.read_file(REQUIREMENT_FILE).decode()
    assert outcome.status is AgentStatus.OK and validate_requirement(xml) == []
    locations = [r.location for r in parse_requirements(xml)]
    assert [loc.split("(")[0].strip() for loc in locations] == [
        "the code exercised by tests/test_b.py", "the code exercised by tests/test_a.py", "the code exercised by tests/test_c.py"]


def test_the_replay_programmer_applies_the_next_history_commit_without_its_test_files(tmp_path):
    repo = calc_repo(tmp_path / "calc")
    source = git.Repo(repo)
    base, oracle = source.commit("base").hexsha, source.commit("oracle").hexsha
    sandbox = sandbox_over(tmp_path)
    sandbox.write_file("tests/test_calc.py", "# the oracle's tests, untouched\n")
    task = TaskSpec(task_id="calc", repo=str(repo), base_ref="base", oracle_ref="oracle")
    for iteration in (1, 2, 3):
        ctx = AgentContext(task=task, iteration=iteration, max_iterations=5, sandbox=sandbox, source_repo=repo,
                           base_sha=base, oracle_sha=oracle)
        ReplayProgrammer().run(ctx)
    # After the last of the three history commits the code is the oracle's; tests stay as they were.
    assert sandbox.read_file("src/calc/__init__.py") == source.commit(oracle).tree["src/calc/__init__.py"].data_stream.read()
    assert sandbox.read_file("tests/test_calc.py") == b"# the oracle's tests, untouched\n"
    exhausted = ReplayProgrammer().run(AgentContext(task=task, iteration=4, max_iterations=5, sandbox=sandbox,
                                                     source_repo=repo, base_sha=base, oracle_sha=oracle))
    assert exhausted.message.startswith("history exhausted")
