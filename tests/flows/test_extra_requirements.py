"""`extra_requirements` on a dataset line: packages the oracle's dependency files do not name (here the
pytest-cov plugin that the repository's own pytest.ini asks for) join the task's environment and its identity."""

from __future__ import annotations

import pytest

from evoci.domain import EnvironmentSpec, RunConfig
from evoci.flows.benchmark import benchmark
from evoci.settings import Paths
from evoci.swe_ci.datasets import load_dataset
from tests.flows.helpers import query
from tests.repos import make_repo, write_dataset

ADD = "def add(a, b):\n    return a + b\n"
TESTS = "import calc\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n\ndef test_sub():\n    assert calc.sub(3, 2) == 1\n"
COVERED = {"pytest.ini": "[pytest]\naddopts = --cov=calc --cov-report=\n", "requirements.txt": ""}


def test_the_dataset_key_reaches_the_environment_and_changes_its_identity(tmp_path):
    dataset = write_dataset(tmp_path / "tasks.jsonl", [
        {"task_id": "t", "repo": "r", "base_ref": "a", "oracle_ref": "b", "extra_requirements": ["pytest-cov>=4"]}])
    [task] = load_dataset(str(dataset), Paths(home=tmp_path)).tasks
    assert task.extra_requirements == ("pytest-cov>=4",)
    plain = EnvironmentSpec(requirements=("pytest",))
    extended = plain.with_requirements(task.extra_requirements)
    assert extended.requirements == ("pytest", "pytest-cov>=4")
    assert extended.content_hash != plain.content_hash
    assert extended.with_requirements(task.extra_requirements) == extended  # listed once


@pytest.mark.usefixtures("prefect_server")
@pytest.mark.slow
def test_a_repository_whose_pytest_config_needs_a_plugin_runs_with_extra_requirements(tmp_path):
    make_repo(tmp_path / "covered", [
        {"src/calc/__init__.py": ADD, "tests/test_calc.py": TESTS, **COVERED},
        {"src/calc/__init__.py": ADD + "\ndef sub(a, b):\n    return a - b\n"},
    ], {"base": 0, "oracle": 1})
    dataset = write_dataset(tmp_path / "tasks.jsonl", [{"task_id": "covered", "repo": "covered", "base_ref": "base",
                                                        "oracle_ref": "oracle", "extra_requirements": ["pytest-cov"]}])
    home = tmp_path / "home"
    [summary] = benchmark(str(dataset), RunConfig(max_iterations=1), home=str(home))
    assert (summary.status, summary.passed, summary.targets) == ("done", 2, 2)
    db = home / "evoci.duckdb"
    assert query(db, "select scored, solved from swe_ci_tasks") == [(True, True)]
    [(spec,)] = query(db, "select spec->>'$.extra_requirements' from tasks")
    assert "pytest-cov" in spec
