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
