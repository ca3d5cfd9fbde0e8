"""SWE-EVO records graded in environments from specs, through ``evoci run`` and the views.

The records are the built-in demo's, written out as the public data has them (no ``repo_path``,
the repository from ``--repos``), with a test command that names a plugin option, and specs for
their repository given in a side file (``--environments``).
"""

from __future__ import annotations

import importlib.metadata
import json
import sys

import pytest

from evoci.cli import main
from tests.flows.helpers import query

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]
RUNNING = f"{sys.version_info.major}.{sys.version_info.minor}"
HARNESS = [f"{name}=={importlib.metadata.version(name)}"
           for name in ("pytest", "pytest-xdist", "execnet", "pytest-json-report", "pytest-metadata")]


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("swe-evo-env-home")  # shared: each environment is built once


@pytest.fixture(scope="module")
def dataset(home, tmp_path_factory):
    """The demo's records with P2P targets, their command naming ``-n0``, and a folder of clones."""
    from evoci.swe_evo.demo import build_swe_evo_demo

    built = build_swe_evo_demo(home / "swe-evo-demo")
    root = tmp_path_factory.mktemp("records")
    folder, repos = root / "records", root / "repos"
    folder.mkdir()
    repos.mkdir()
    (repos / "evoci__kvconf").symlink_to(built.parent / "kvconf")
    for record in json.loads(built.read_text()):
        if not record["PASS_TO_PASS"]:
            continue
        del record["repo_path"]
        record["test_cmds"] = "pytest --continue-on-collection-errors -n0 -rA"  # xdist's option, as 13 public records
        (folder / f"{record['instance_id']}.json").write_text(json.dumps(record))
    return folder, repos


def side_file(path, **spec) -> str:
    path.write_text(json.dumps({"evoci/kvconf": [{"versions": ["0.1", "0.2", "0.3"], "python": RUNNING,
                                                  "packages": HARNESS, **spec}]}))
    return str(path)


def run(dataset, home, db, environments: str, agent: str = "gold") -> int:
    folder, repos = dataset
    return main(["run", str(folder), "--repos", str(repos), "--agent", agent, "--home", str(home), "--db", str(db),
                 "--environments", environments, "--test-timeout", "300"])


def test_a_command_naming_a_plugin_option_grades_with_the_plugin_loaded_explicitly(dataset, home, tmp_path):
    db = tmp_path / "results.duckdb"
    assert run(dataset, home, db, side_file(tmp_path / "envs.json")) == 0
    rows = query(db, "select task_id, resolved, flags from swe_evo_instances order by task_id")
    assert rows == [("kvconf_0.1.0_0.2.0", True, []), ("kvconf_0.3.0_0.3.1", True, [])]
    # only the test_patch's files ran (the directives), with xdist loaded by name while autoloading is off
    [(complete,)] = query(db, "select complete from run_completeness")
    assert complete is True


def test_an_environment_that_cannot_import_the_package_is_an_environment_error_never_scored(dataset, home, tmp_path, capsys):
    db = tmp_path / "results.duckdb"
    broken = side_file(tmp_path / "broken.json", pythonpath=["not-the-source"])  # `import kvconf` fails at collection
    run(dataset, home, db, broken)
    rows = query(db, "select task_id, task_status, graded, flags from swe_evo_instances order by task_id")
    assert rows == [("kvconf_0.1.0_0.2.0", "environment_error", False, ["environment_error"]),
                    ("kvconf_0.3.0_0.3.1", "environment_error", False, ["environment_error"])]
    assert query(db, "select count(*) from iterations") == [(0,)]  # no agent was graded in it
    [(complete, reasons)] = query(db, "select complete, unscored_reasons from run_completeness")
    assert complete is False and reasons == {"environment_error": 2}
    [(reason,)] = query(db, "select reason from tasks where task_id = 'kvconf_0.1.0_0.2.0'")
    assert "do not pass on the clean base" in reason and "evoci/kvconf 0.1" in reason
    # retryable: the failed proof is not kept, so the same command proves the environment again
    run(dataset, home, db, broken)
    assert "environment_error" in capsys.readouterr().out + str(query(db, "select status from tasks"))
