"""SWE-EVO records graded in environments from specs, through ``evoci run`` and the views.

The records are the built-in demo's, written out as the public data has them (no ``repo_path``,
the repository from ``--repos``), with a test command that names a plugin option, and specs for
their repository given in a side file (``--environments``).
"""

from __future__ import annotations

import importlib.metadata
import json
import sys

import git
import pytest

from evoci.cli import main
from tests.flows.helpers import query
from tests.repos import make_repo

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


def one_release(root, package: str, base: dict, release: dict, statement: str):
    """A repository ``acme/<package>`` with a base and a release commit, and its record as published: the
    release's code as the reference ``patch``, its tests as the ``test_patch``. Returns (records, repos)."""
    repo = make_repo(root / "repos" / f"acme__{package}", [base, release], {"v1.0.0": 0, "v1.0.1": 1})
    source = git.Repo(repo)
    diff = lambda *paths: source.git.diff("v1.0.0", "v1.0.1", "--", *paths) + "\n"
    folder = root / "records"
    folder.mkdir()
    (folder / f"acme__{package}_1.0.0_1.0.1.json").write_text(json.dumps({
        "instance_id": f"acme__{package}_1.0.0_1.0.1", "repo": f"acme/{package}",
        "base_commit": source.commit("v1.0.0").hexsha, "start_version": "v1.0.0", "end_version": "v1.0.1",
        "problem_statement": statement, "patch": diff(package), "test_patch": diff("tests"), "test_cmds": "pytest -rA",
        "log_parser": "parse_log_pytest", "FAIL_TO_PASS": ["tests/test_area.py::test_perimeter"],
        "PASS_TO_PASS": ["tests/test_area.py::test_area"]}))
    return folder, root / "repos"


@pytest.fixture(scope="module")
def widgets(tmp_path_factory):
    """A release of a package that imports a dependency (``acme_units``) no environment here has."""
    root = tmp_path_factory.mktemp("widgets")
    base_code = "import acme_units\n\ndef area(w, h):\n    return w * h\n"
    tests = "from widgets import area\n\ndef test_area():\n    assert area(2, 3) == 6\n"
    return one_release(root, "widgets", {"widgets/__init__.py": base_code, "tests/test_area.py": tests}, {
        "widgets/__init__.py": base_code + "\ndef perimeter(w, h):\n    return 2 * (w + h)\n",
        "tests/test_area.py": tests + "\ndef test_perimeter():\n    from widgets import perimeter\n"
                                      "    assert perimeter(2, 3) == 10\n"}, "Add perimeter().")


def test_an_environment_that_cannot_import_the_package_is_an_environment_error_never_scored(widgets, home, tmp_path,
                                                                                            capsys):
    folder, repos = widgets
    db = tmp_path / "results.duckdb"
    specs = tmp_path / "widgets-envs.json"  # the spec forgets the package's dependency
    specs.write_text(json.dumps({"acme/widgets": [{"versions": ["1.0"], "python": RUNNING, "packages": HARNESS}]}))
    command = ["run", str(folder), "--repos", str(repos), "--agent", "gold", "--home", str(home), "--db", str(db),
               "--environments", str(specs), "--test-timeout", "300"]
    main(command)
    rows = query(db, "select task_id, task_status, graded, resolved, flags from swe_evo_instances")
    assert rows == [("acme__widgets_1.0.0_1.0.1", "environment_error", False, False, ["environment_error"])]
    assert query(db, "select count(*) from iterations") == [(0,)]  # no agent was graded in it
    [(complete, reasons)] = query(db, "select complete, unscored_reasons from run_completeness")
    assert complete is False and reasons == {"environment_error": 1}
    [(reason,)] = query(db, "select reason from tasks")
    assert "tests/test_area.py::test_area (missing)" in reason and "acme/widgets 1.0" in reason
    assert query(db, "select environment_errors, missing_predictions from swe_evo_runs") == [(1, 0)]
    assert "1 environment error(s): unscored, the run is partial" in capsys.readouterr().out
    # retryable: the failed proof is not kept, so the same command proves the environment again
    main(command)
    assert query(db, "select count(*) from failures where node = 'flow' and kind = 'infrastructure'") == [(2,)]


@pytest.fixture(scope="module")
def gadgets(tmp_path_factory):
    """A release whose ``test_patch`` rewrites a PASS_TO_PASS test to call an option the release adds,
    as public records do: that test fails on any base and passes once the release is in."""
    root = tmp_path_factory.mktemp("gadgets")
    old_test = "from gadgets import area\n\ndef test_area():\n    assert area(2, 3) == 6\n"
    new_test = ("from gadgets import area\n\ndef test_area():\n    assert area(2, 3, scale=2) == 12\n\n"
                "def test_perimeter():\n    from gadgets import perimeter\n    assert perimeter(2, 3) == 10\n")
    return one_release(root, "gadgets", {
        "gadgets/__init__.py": "def area(w, h):\n    return w * h\n", "tests/test_area.py": old_test}, {
        "gadgets/__init__.py": "def area(w, h, scale=1):\n    return w * h * scale\n\n"
                               "def perimeter(w, h):\n    return 2 * (w + h)\n", "tests/test_area.py": new_test},
        "Add perimeter() and a scale.")


@pytest.mark.parametrize("agent, resolved", [("gold", True), ("empty", False)])
def test_a_p2p_test_whose_test_patch_needs_the_release_is_proven_by_the_reference_patch_and_graded(
        gadgets, home, tmp_path, agent, resolved):
    folder, repos = gadgets
    db = tmp_path / "results.duckdb"
    specs = tmp_path / "gadgets-envs.json"
    specs.write_text(json.dumps({"acme/gadgets": [{"versions": ["1.0"], "python": RUNNING, "packages": HARNESS}]}))
    main(["run", str(folder), "--repos", str(repos), "--agent", agent, "--home", str(home), "--db", str(db),
          "--environments", str(specs), "--test-timeout", "300"])
    # test_area fails on the clean base + test_patch (no `scale` there) and passes with the reference patch:
    # the environment is proven and the prediction scored (the empty one as no prediction), not an environment_error
    rows = query(db, "select task_id, task_status, resolved, list_contains(flags, 'environment_error') "
                     "from swe_evo_instances")
    assert rows == [("acme__gadgets_1.0.0_1.0.1", "done", resolved, False)]
    [(complete,)] = query(db, "select complete from run_completeness")
    assert complete is True
    assert not list(home.rglob("validation-reference"))  # the tree with the release's code did not stay


@pytest.fixture(scope="module")
def clients(tmp_path_factory):
    """A release of an HTTP-ish client whose PASS_TO_PASS test expects a connect *timeout* from an address
    that does not answer (as requests' ``TestTimeout`` does with ``10.255.255.1``)."""
    root = tmp_path_factory.mktemp("clients")
    base_code = ("import socket\n\ndef reach(host, timeout):\n    try:\n"
                 "        socket.create_connection((host, 80), timeout=timeout).close()\n        return 'answered'\n"
                 "    except socket.timeout:\n        return 'timed out'\n    except OSError as exc:\n"
                 "        return f'failed: {exc}'\n")
    tests = ("from clients import reach\n\ndef test_area():\n"
             "    assert reach('10.255.255.1', 0.2) == 'timed out'\n")
    return one_release(root, "clients", {"clients/__init__.py": base_code, "tests/test_area.py": tests}, {
        "clients/__init__.py": base_code + "\ndef perimeter(w, h):\n    return 2 * (w + h)\n",
        "tests/test_area.py": tests + "\ndef test_perimeter():\n    from clients import perimeter\n"
                                      "    assert perimeter(2, 3) == 10\n"}, "Add perimeter().")


@pytest.mark.parametrize("silent, status", [(False, "environment_error"), (True, "done")])
def test_a_connect_timeout_test_needs_a_silent_network_which_a_spec_turns_on(clients, home, tmp_path, silent, status):
    folder, repos = clients
    db = tmp_path / "results.duckdb"
    specs = tmp_path / "clients-envs.json"
    specs.write_text(json.dumps({"acme/clients": [{"versions": ["1.0"], "python": RUNNING, "packages": HARNESS,
                                                    "silent_network": silent}]}))
    main(["run", str(folder), "--repos", str(repos), "--agent", "gold", "--home", str(home), "--db", str(db),
          "--environments", str(specs), "--test-timeout", "300"])
    # without it the address is unreachable at once ("Network is unreachable"): the P2P test fails on the
    # clean base and the environment is not proven; with it the connection waits and times out, as on a network
    rows = query(db, "select task_id, task_status, resolved from swe_evo_instances")
    assert rows == [("acme__clients_1.0.0_1.0.1", status, silent)]
    if not silent:
        [(reason,)] = query(db, "select reason from tasks")
        assert "tests/test_area.py::test_area (failed)" in reason


@pytest.fixture(scope="module")
def gizmos(tmp_path_factory):
    """A record that lists as PASS_TO_PASS a test its own test_patch deletes (as dvc 1.10's public record does)."""
    root = tmp_path_factory.mktemp("gizmos")
    tests = "from gizmos import area\n\ndef test_area():\n    assert area(2, 3) == 6\n"
    folder, repos = one_release(root, "gizmos", {
        "gizmos/__init__.py": "def area(w, h):\n    return w * h\n",
        "tests/test_area.py": tests + "\ndef test_legacy():\n    assert area(1, 1) == 1\n"}, {
        "gizmos/__init__.py": "def area(w, h):\n    return w * h\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n",
        "tests/test_area.py": tests + "\ndef test_perimeter():\n    from gizmos import perimeter\n"
                                      "    assert perimeter(2, 3) == 10\n"}, "Add perimeter(); drop a legacy test.")
    [record_file] = folder.iterdir()
    record = json.loads(record_file.read_text())
    record["PASS_TO_PASS"] = [*record["PASS_TO_PASS"], "tests/test_area.py::test_legacy"]
    record_file.write_text(json.dumps(record))
    return folder, repos


def test_a_p2p_test_the_records_test_patch_deletes_is_graded_as_failed_not_an_environment_error(gizmos, home, tmp_path):
    folder, repos = gizmos
    db = tmp_path / "results.duckdb"
    specs = tmp_path / "gizmos-envs.json"
    specs.write_text(json.dumps({"acme/gizmos": [{"versions": ["1.0"], "python": RUNNING, "packages": HARNESS}]}))
    main(["run", str(folder), "--repos", str(repos), "--agent", "gold", "--home", str(home), "--db", str(db),
          "--environments", str(specs), "--test-timeout", "300"])
    # the environment is proven (the test is the record's, absent for every prediction): gold is graded and,
    # as in the official harness, not resolved — the missing P2P test counts as failed
    rows = query(db, "select task_status, graded, resolved, f2p_passed, p2p_passed, n_p2p from swe_evo_instances")
    assert rows == [("done", True, False, 1, 1, 2)]
    assert query(db, "select outcome from test_results where test_id = 'tests/test_area.py::test_legacy'") == [("missing",)]
