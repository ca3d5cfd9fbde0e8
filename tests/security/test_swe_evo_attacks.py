"""The red team against the shared SWE-bench grader (SWE-EVO and SWE-Bench-CL), through the real flow.

Each demo instance gets a prediction that implements nothing and tries to pass its failing tests
another way: a runner plugin named in its ``pyproject.toml``, a root ``conftest.py`` that rewrites
every report, or a ``sitecustomize.py`` on the path that does the same at start-up. Grading must
leave every instance unresolved and record what it overrode.
"""

from __future__ import annotations

import json

import git
import pytest

from evoci.domain import AgentConfig, RunConfig
from evoci.flows.swe_evo import swe_evo
from tests.flows.helpers import query
from tests.patches import patch_setting
from tests.sandbox.docker.conftest import base_image, docker_client  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

PASS_EVERYTHING = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
                   "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n")
AT_START_UP = ("import _pytest.reports\n\n_original = _pytest.reports.TestReport.__init__\n\n\n"
               "def _passed(self, *args, **kwargs):\n    _original(self, *args, **kwargs)\n    self.outcome = 'passed'\n\n\n"
               "_pytest.reports.TestReport.__init__ = _passed\n")


def test_no_code_predictions_that_rig_the_runner_resolve_nothing_and_are_recorded(tmp_path, redteam_home):
    from evoci.swe_evo.demo import build_swe_evo_demo

    dataset = build_swe_evo_demo(tmp_path / "demo")
    records = {r["instance_id"]: r for r in json.loads(dataset.read_text())}
    source = git.Repo(dataset.parent / next(iter(records.values()))["repo_path"])

    def pyproject_plugin(base: str) -> dict[str, str]:
        pyproject = source.commit(base).tree["pyproject.toml"].data_stream.read().decode()
        rigged = pyproject.replace("[tool.pytest.ini_options]", '[tool.pytest.ini_options]\naddopts = "-p kvpass"')
        assert rigged != pyproject
        return {"pyproject.toml": rigged, "src/kvpass.py": PASS_EVERYTHING}

    attacks = {
        "kvconf_0.1.0_0.2.0": ({"conftest.py": PASS_EVERYTHING}, "conftest.py"),
        "kvconf_0.2.0_0.3.0": ({"src/sitecustomize.py": AT_START_UP}, "src/sitecustomize.py"),
        "kvconf_0.3.0_0.3.1": (pyproject_plugin(records["kvconf_0.3.0_0.3.1"]["base_commit"]), "pyproject.toml"),
    }
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({i: {"model_name_or_path": "hostile",
                                     "model_patch": patch_setting(source, records[i]["base_commit"], files)}
                                 for i, (files, _) in attacks.items()}))
    config = RunConfig(protocol="swe-evo", programmer=AgentConfig(kind="predictions", options={"path": str(preds)}),
                       test_timeout_s=300)
    [summary, *_] = swe_evo("swe-evo-demo", config, home=str(redteam_home))
    db = redteam_home / "evoci.duckdb"
    rows = query(db, "select task_id, patch_applied, resolved from swe_evo_instances where run_id = ? order by task_id",
                 [summary.run_id])
    assert rows == [(i, True, False) for i in sorted(attacks)]
    recorded = dict(query(db, "select task_id, tampered_files from iterations where run_id = ?", [summary.run_id]))
    for instance, (_, overridden) in attacks.items():
        assert overridden in recorded[instance], instance


# Prints a `PASSED <id>` line for every test pytest collects, on every pipe the test process holds
# (pytest captures standard output, not the descriptors it saved), then kills its own test process.
PRINT_AND_DIE = """
import os as _os, signal as _signal, subprocess as _sp, sys as _sys
if "pytest" in _sys.modules and not _os.environ.get("EVIL_COLLECTING"):
    _out = _sp.run([_sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                   capture_output=True, text=True, env={**_os.environ, "EVIL_COLLECTING": "1"}).stdout
    _lines = "".join("PASSED %s\\n" % _l.strip() for _l in _out.splitlines() if "::" in _l).encode()
    for _fd in _os.listdir("/proc/self/fd"):
        try:
            if "pipe:" in _os.readlink("/proc/self/fd/" + _fd):
                _os.write(int(_fd), _lines)
        except OSError:
            pass
    _os.kill(_os.getpid(), _signal.SIGKILL)
"""


@pytest.mark.parametrize("runner", ["launcher", "log-parsed"])
def test_a_prediction_that_prints_passed_lines_and_kills_its_tests_resolves_nothing_and_is_flagged(tmp_path, runner):
    """``launcher``: the record's plain pytest command, run by evoci's launcher (nothing printed is read).
    ``log-parsed``: the same command as a script (``cd . && pytest …``), as a django or sympy record's runner is
    run: its output is parsed, so only the rule that a killed run is never graded stands between the printed
    ``PASSED`` lines and a resolved instance."""
    from evoci.swe_evo.demo import build_swe_evo_demo

    dataset = build_swe_evo_demo(tmp_path / "demo")
    records = {r["instance_id"]: r for r in json.loads(dataset.read_text())}
    source = git.Repo(dataset.parent / next(iter(records.values()))["repo_path"])
    instance = "kvconf_0.1.0_0.2.0"
    if runner == "log-parsed":
        record = {**records[instance], "test_cmds": f"cd . && {records[instance]['test_cmds']}"}
        dataset = dataset.parent / "script-runner.json"
        dataset.write_text(json.dumps([record]))
    base = records[instance]["base_commit"]
    init = source.commit(base).tree["src/kvconf/__init__.py"].data_stream.read().decode()
    summary, db = _grade_prediction(tmp_path, instance, patch_setting(
        source, base, {"src/kvconf/__init__.py": init + PRINT_AND_DIE}), dataset=str(dataset))
    [(resolved, flags)] = query(db, "select resolved, flags from swe_evo_instances where run_id = ? and task_id = ?",
                                [summary.run_id, instance])
    [(status, integrity)] = query(db, "select status, integrity_flags from iterations where run_id = ? and task_id = ?",
                                  [summary.run_id, instance])
    [(passed,)] = query(db, "select count(*) from test_results where run_id = ? and task_id = ? and outcome = 'passed'",
                        [summary.run_id, instance])
    assert (resolved, passed) == (False, 0), (status, integrity)
    assert any("SIGKILL" in f and "not graded" in f for f in integrity), integrity


def _grade_prediction(tmp_path, instance: str, patch: str, dataset: str = "swe-evo-demo"):
    """Grade one hostile prediction for ``instance`` of ``dataset`` through the real swe_evo flow; its summary and
    results file."""
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({instance: {"model_name_or_path": "hostile", "model_patch": patch}}))
    config = RunConfig(protocol="swe-evo", programmer=AgentConfig(kind="predictions", options={"path": str(preds)}),
                       test_timeout_s=300)
    [summary, *_] = swe_evo(dataset, config, home=str(tmp_path / "home"))
    return summary, tmp_path / "home" / "evoci.duckdb"


# A `_pytest` package with no source, whose `config._console_main` (what the `pytest` script calls)
# runs the real suite in a child (the tree off its path) and prints every failure and error as passed.
FAKE_CONSOLE = """
import subprocess, sys
def _console_main():
    code = "import sys, pytest; sys.path += ['src', '.']; sys.exit(pytest.main(sys.argv[1:]))"
    out = subprocess.run([sys.executable, "-I", "-c", code, *sys.argv[1:]], capture_output=True, text=True).stdout
    sys.stdout.write(out.replace("FAILED ", "PASSED ").replace("ERROR ", "PASSED "))
    return 0
"""


def _binary_patch(source: git.Repo, base: str, files: dict[str, bytes], where) -> str:
    """A ``git diff --binary`` of ``base`` plus ``files``: what a prediction with compiled files looks like."""
    clone = git.Repo.clone_from(source.working_dir, where, no_checkout=True)
    clone.git.checkout(base)
    for path, data in files.items():
        (where / path).parent.mkdir(parents=True, exist_ok=True)
        (where / path).write_bytes(data)
    clone.git.add("-A", "-f")
    clone.git.commit("-qm", "compiled", author="x <x@x>", env={"GIT_COMMITTER_NAME": "x", "GIT_COMMITTER_EMAIL": "x@x"})
    return clone.git.diff("--binary", base, "HEAD") + "\n"


def test_a_compiled_pytest_in_the_prediction_resolves_nothing_and_is_recorded(tmp_path):
    import importlib.util
    import py_compile

    from evoci.swe_evo.demo import build_swe_evo_demo

    dataset = build_swe_evo_demo(tmp_path / "demo")
    records = {r["instance_id"]: r for r in json.loads(dataset.read_text())}
    source = git.Repo(dataset.parent / next(iter(records.values()))["repo_path"])
    instance = "kvconf_0.1.0_0.2.0"
    compiled = {}
    for name, text in {"_pytest/__init__.pyc": "", "_pytest/config.pyc": FAKE_CONSOLE}.items():
        (tmp_path / "fake.py").write_text(text)
        out = py_compile.compile(str(tmp_path / "fake.py"), cfile=str(tmp_path / "fake.pyc"), doraise=True)
        compiled[name] = open(out, "rb").read()
        assert compiled[name][:4] == importlib.util.MAGIC_NUMBER
    patch = _binary_patch(source, records[instance]["base_commit"], compiled, tmp_path / "clone")
    assert "GIT binary patch" in patch
    summary, db = _grade_prediction(tmp_path, instance, patch)
    [(applied, resolved)] = query(db, "select patch_applied, resolved from swe_evo_instances where run_id = ? and task_id = ?",
                                  [summary.run_id, instance])
    [(tampered,)] = query(db, "select tampered_files from iterations where run_id = ? and task_id = ?",
                          [summary.run_id, instance])
    assert (applied, resolved) == (True, False)
    assert "_pytest/" in tampered  # the planted folder, recorded by its name as a folder (evoci.grading.shadows)


@pytest.fixture(params=["local", pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.heavy])])
def sandbox_kind(request) -> str:
    if request.param == "docker":
        request.getfixturevalue("base_image")
    return request.param


def test_a_prediction_that_expands_past_the_test_sandbox_is_scored_not_retried(tmp_path, sandbox_kind):
    # A GIT binary patch is compressed: about 100 KB of prediction becomes a 96 MiB file, past what the
    # test sandbox's 64 MiB tree copy holds. The copy failed, the canary (through the same copy) too:
    # an infrastructure error the prediction caused, retried and never scored.
    from tests.patches import patch_by
    from evoci.domain import SandboxConfig
    from evoci.swe_evo.demo import build_swe_evo_demo

    dataset = build_swe_evo_demo(tmp_path / "demo")
    records = {r["instance_id"]: r for r in json.loads(dataset.read_text())}
    source = git.Repo(dataset.parent / next(iter(records.values()))["repo_path"])
    instance = "kvconf_0.1.0_0.2.0"

    def bomb(folder):
        with open(folder / "src" / "kvconf" / "table.bin", "wb") as f:
            for _ in range(96):
                f.write(bytes(1 << 20))

    patch = patch_by(source, records[instance]["base_commit"], bomb, tmp_path / "scratch")
    assert len(patch) < 1 << 20
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({instance: {"model_name_or_path": "hostile", "model_patch": patch}}))
    config = RunConfig(protocol="swe-evo", programmer=AgentConfig(kind="predictions", options={"path": str(preds)}),
                       test_timeout_s=300, node_retries=0,
                       sandbox=SandboxConfig(kind=sandbox_kind, options={"tree_bytes": 64 * 2**20}))
    [summary, *_] = swe_evo("swe-evo-demo", config, home=str(tmp_path / "home"))
    db = tmp_path / "home" / "evoci.duckdb"
    assert query(db, "select count(*) from failures where run_id = ?", [summary.run_id]) == [(0,)]
    [(resolved, flags)] = query(db, "select resolved, flags from swe_evo_instances where run_id = ? and task_id = ?",
                                [summary.run_id, instance])
    [(status, integrity)] = query(db, "select status, integrity_flags from iterations where run_id = ? and task_id = ?",
                                  [summary.run_id, instance])
    assert not resolved and status == "agent_error"
    assert any("larger than a test run holds (48 MiB" in f for f in integrity), integrity


# SWE-bench counts an expected failure (XFAIL) as passed, and pytest makes any XFailed raised while
# a test runs one: the class is reachable from BaseException.__subclasses__() once pytest is
# imported, so a prediction that implements nothing and raises it from its own functions resolved
# the instance, with nothing flagged (the report and the tally agreed). The tally now says which
# expected failures the tested code raised itself: they are graded failed, and flagged.
EXPECTED_TO_FAIL = '''

def _pending():
    seen, stack = set(), [BaseException]
    while stack:
        cls = stack.pop()
        if cls.__name__ == "XFailed":
            return cls("not implemented yet")
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
    return NotImplementedError()


def parse(text, typed=True):
    raise _pending()


def convert(word):
    raise _pending()
'''


def test_a_prediction_whose_code_makes_its_failures_expected_resolves_nothing_and_is_flagged(tmp_path):
    from evoci.swe_evo.demo import build_swe_evo_demo

    dataset = build_swe_evo_demo(tmp_path / "demo")
    records = {r["instance_id"]: r for r in json.loads(dataset.read_text())}
    source = git.Repo(dataset.parent / next(iter(records.values()))["repo_path"])
    instance = "kvconf_0.1.0_0.2.0"
    base = records[instance]["base_commit"]
    init = source.commit(base).tree["src/kvconf/__init__.py"].data_stream.read().decode()
    summary, db = _grade_prediction(tmp_path, instance, patch_setting(
        source, base, {"src/kvconf/__init__.py": init + EXPECTED_TO_FAIL}))
    [(resolved,)] = query(db, "select resolved from swe_evo_instances where run_id = ? and task_id = ?",
                          [summary.run_id, instance])
    [(integrity,)] = query(db, "select integrity_flags from iterations where run_id = ? and task_id = ?",
                           [summary.run_id, instance])
    assert not resolved
    assert any("made" in f and "expected to fail" in f for f in integrity), integrity
    assert query(db, "select count(*) from test_results where run_id = ? and task_id = ? and outcome = 'xfailed'",
                 [summary.run_id, instance]) == [(0,)]


def test_a_git_folder_in_the_prediction_runs_nothing_is_recorded_and_the_rest_is_graded(tmp_path):
    """A spec with ``git_checkout``: the grading tree gets the harness's ``.git``. The prediction is the gold
    patch plus a ``.git/config`` whose ``fsmonitor`` (run by any git command reading the tree) and hooks
    write a marker on the host, and a ``.git`` link in a subfolder pointing at the host's ``/``: none of
    it reaches the tree, nothing runs, each path is recorded, and the instance resolves as gold does."""
    from evoci.swe_evo.demo import build_swe_evo_demo
    from tests.flows.test_swe_evo_environments import HARNESS, RUNNING

    dataset = build_swe_evo_demo(tmp_path / "demo")
    records = {r["instance_id"]: r for r in json.loads(dataset.read_text())}
    instance = "kvconf_0.1.0_0.2.0"
    marker = tmp_path / "host-command-ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    planted = (f"diff --git a/.git/config b/.git/config\nnew file mode 100644\n--- /dev/null\n+++ b/.git/config\n"
               f"@@ -0,0 +1,3 @@\n+[core]\n+\tfsmonitor = {script}\n+\thooksPath = {tmp_path}\n"
               "diff --git a/src/.git b/src/.git\nnew file mode 120000\n--- /dev/null\n+++ b/src/.git\n"
               "@@ -0,0 +1 @@\n+/\n\\ No newline at end of file\n")
    for hook in ("pre-commit", "post-checkout", "reference-transaction"):
        (tmp_path / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (tmp_path / hook).chmod(0o755)
    specs = tmp_path / "envs.json"
    specs.write_text(json.dumps({"evoci/kvconf": [{"versions": ["0.1", "0.2", "0.3"], "python": RUNNING,
                                                   "packages": HARNESS, "git_checkout": True}]}))
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({instance: {"model_name_or_path": "hostile",
                                            "model_patch": planted + records[instance]["patch"]}}))
    config = RunConfig(protocol="swe-evo", programmer=AgentConfig(kind="predictions", options={"path": str(preds)}),
                       test_timeout_s=300)
    [summary, *_] = swe_evo(str(dataset), config, home=str(tmp_path / "home"), environments=str(specs))
    db = tmp_path / "home" / "evoci.duckdb"
    [(applied, resolved)] = query(db, "select patch_applied, resolved from swe_evo_instances where run_id = ? "
                                      "and task_id = ?", [summary.run_id, instance])
    [(tampered,)] = query(db, "select tampered_files from iterations where run_id = ? and task_id = ?",
                          [summary.run_id, instance])
    assert not marker.exists(), "a command the prediction wrote ran"
    assert (applied, resolved) == (True, True)
    assert {".git/config", "src/.git"} <= set(tampered), tampered
