"""The harness, not the prompt, keeps the SWE-CI rules: architect changes discarded, tests restored."""

from __future__ import annotations

import sys

import pytest

from evoci.workspace import Workspace
from evoci.domain import AgentConfig, RunConfig, TaskSpec
from evoci.flows.evolve import evolve
from tests.flows.helpers import query
from tests.repos import calc_repo

pytestmark = pytest.mark.usefixtures("prefect_server")

REQUIREMENT = ("<requirements><requirement><location>src/calc</location><description>add sub, mul, div</description>"
               "<contract>arithmetic</contract><acceptance>tests pass</acceptance></requirement></requirements>")
# The architect writes its requirement, then also "fixes" the code itself (not allowed).
ARCHITECT = f"""
import pathlib
pathlib.Path('.evoci/requirement.xml').write_text({REQUIREMENT!r})
pathlib.Path('src/calc/__init__.py').write_text('raise SystemExit')
pathlib.Path('NOTES.md').write_text('architect was here')
"""
# The programmer implements everything, and also weakens a test (tampering).
PROGRAMMER = """
import pathlib
pathlib.Path('src/calc/__init__.py').write_text(
    'def add(a, b):\\n    return a + b\\n\\ndef sub(a, b):\\n    return a - b\\n\\n'
    'def mul(a, b):\\n    return a * b\\n\\ndef div(a, b):\\n    return a / b\\n')
pathlib.Path('tests/test_calc.py').write_text('def test_add():\\n    assert True\\n')
pathlib.Path('tests/test_extra.py').write_text('def test_free():\\n    assert True\\n')
"""


def command_agent(code: str) -> AgentConfig:
    return AgentConfig(kind="command", options={"command": [sys.executable, "-c", code]})


def test_architect_changes_are_discarded_and_test_tampering_is_undone_and_recorded(tmp_path):
    task = TaskSpec(task_id="calc-rules", repo=str(calc_repo(tmp_path / "calc")), base_ref="base", oracle_ref="oracle")
    config = RunConfig(max_iterations=3, architect=command_agent(ARCHITECT), programmer=command_agent(PROGRAMMER))
    home = tmp_path / "home"
    summary = evolve(task, config, home=str(home))
    db = home / "evoci.duckdb"
    assert (summary.status, summary.iterations, summary.passed) == ("done", 1, 5)  # judged by the oracle's own tests
    [(discarded, tampered, architect, programmer)] = query(
        db, "select discarded_files, tampered_files, architect_status, programmer_status from iterations where iteration = 1")
    assert sorted(discarded) == ["NOTES.md", "src/calc/__init__.py"]
    assert sorted(tampered) == ["tests/test_calc.py", "tests/test_extra.py"]
    assert (architect, programmer) == ("ok", "ok")
    # The committed iteration holds the programmer's code and the oracle's tests, unchanged.
    workspace = Workspace(home / "runs" / summary.run_id / "calc-rules" / "workspace").repo
    assert "test_div" in workspace.git.show("HEAD:tests/test_calc.py")
    assert "tests/test_extra.py" not in workspace.git.ls_files("--with-tree=HEAD")
    assert not (home / "runs" / summary.run_id / "calc-rules" / "workspace" / ".git").exists()  # git lives outside
    assert query(db, "select count(*) from test_results where iteration = 1 and outcome = 'passed'") == [(5,)]


def test_a_repo_without_pytest_config_scores_right_when_evocis_home_is_inside_another_project(tmp_path):
    # The outer project's configuration would rename every test id (rootdir) and break the run
    # (addopts) if pytest went looking above the task's tree.
    outer = tmp_path / "outer-project"
    outer.mkdir()
    (outer / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "--no-such-option"\ntestpaths = ["x"]\n')
    (outer / "conftest.py").write_text("raise SystemExit('the outer project must not be imported')\n")
    repo = calc_repo(tmp_path / "calc")  # no pytest configuration of its own
    task = TaskSpec(task_id="calc-nested", repo=str(repo), base_ref="base", oracle_ref="oracle")
    home = outer / ".evoci"
    summary = evolve(task, RunConfig(max_iterations=3), home=str(home))
    assert (summary.status, summary.passed, summary.targets) == ("done", 5, 5)
    db = home / "evoci.duckdb"
    assert query(db, "select test_id from targets order by test_id")[0] == ("tests/test_calc.py::test_add",)
    assert [n for (n,) in query(db, "select n_passed from swe_ci_iterations order by iteration")] == [2, 3, 3, 5]
