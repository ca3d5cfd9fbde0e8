"""Environment self-repair: an oracle whose tests import an undeclared module still gets a target set."""

from __future__ import annotations

import pytest

from evoci.domain import RunConfig, TaskSpec
from evoci.flows.evolve import evolve
from tests.flows.helpers import query
from tests.repos import make_repo

pytestmark = pytest.mark.usefixtures("prefect_server")

TESTS = "import yaml\nimport conf\n\ndef test_load():\n    assert conf.load('a: 1') == {'a': 1}\n"


def test_a_missing_module_is_added_to_the_environment_and_recorded(tmp_path):
    repo = make_repo(tmp_path / "conf", [
        {"conf.py": "def load(text):\n    return None\n", "tests/test_conf.py": TESTS},
        {"conf.py": "import yaml\n\ndef load(text):\n    return yaml.safe_load(text)\n"},
    ], {"base": 0, "oracle": 1})
    home = tmp_path / "home"
    summary = evolve(TaskSpec(task_id="conf", repo=str(repo), base_ref="base", oracle_ref="oracle"),
                     RunConfig(max_iterations=2), home=str(home))
    db = home / "evoci.duckdb"
    assert (summary.status, summary.targets, summary.passed) == ("done", 1, 1)
    [(attempt, module, distribution, env_hash)] = query(db, "select attempt, module, distribution, environment_hash "
                                                             "from environment_repairs")
    assert (attempt, module, distribution) == (1, "yaml", "PyYAML")
    assert query(db, "select environment_hash from tasks") == [(env_hash,)]


def test_a_pytest_plugin_named_by_the_oracles_configuration_is_added_before_the_task_is_judged(tmp_path):
    # `addopts = --cov` with no pytest-cov installed: pytest exits 4 (usage error) before any
    # report. That is read by the repair step (never "retry this flow run"); the dataset line
    # needs nothing extra.
    config = '[tool.pytest.ini_options]\naddopts = "--cov=conf --cov-report="\n'
    repo = make_repo(tmp_path / "cov", [
        {"conf.py": "def load(text):\n    return None\n", "pyproject.toml": config,
         "tests/test_conf.py": "import conf\n\ndef test_load():\n    assert conf.load('a') == 'a'\n"},
        {"conf.py": "def load(text):\n    return text\n"},
    ], {"base": 0, "oracle": 1})
    home = tmp_path / "home"
    summary = evolve(TaskSpec(task_id="cov", repo=str(repo), base_ref="base", oracle_ref="oracle"),
                     RunConfig(max_iterations=2), home=str(home))
    assert (summary.status, summary.targets, summary.passed) == ("done", 1, 1)
    assert query(home / "evoci.duckdb", "select distribution from environment_repairs") == [("pytest-cov",)]
