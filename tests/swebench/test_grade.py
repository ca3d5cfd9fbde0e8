"""Grading a demo instance in the local sandbox: with an agent's rigged tests, and on another Python."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from evoci.domain import SandboxConfig
from evoci.sandbox import open_sandbox
from evoci.sandbox.environment import _pyenv_interpreter, resolve_environment
from evoci.settings import Paths
from evoci.swe_evo.demo import build_swe_evo_demo
from evoci.swe_evo.loader import EvoInstance, load_swe_evo
from evoci.swebench.grade import GradeRequest, grade
from tests.patches import patch_setting


@pytest.fixture(scope="module")
def instances(tmp_path_factory) -> dict[str, EvoInstance]:
    data = load_swe_evo(build_swe_evo_demo(tmp_path_factory.mktemp("demo")))
    return {i.instance_id: i for i in data.instances}


def _grade(instance: EvoInstance, patch: str, home: Path, python: str | None = None):
    request = GradeRequest(base_sha=instance.base_commit, patch=patch, test_patch=instance.answers.test_patch,
                           test_cmds=instance.test_cmds, log_parser=instance.log_parser,
                           targets=[*instance.f2p, *instance.p2p], timeout_s=300)
    environment = resolve_environment({}, python=python)
    paths = Paths(home=home)
    return grade(request, git.Repo(instance.repo_path), home / "tree",
                 lambda root: open_sandbox(SandboxConfig(), root, environment, paths))


@pytest.mark.slow
def test_an_agent_that_rewrites_the_failing_test_does_not_pass_it(instances, tmp_path):
    instance = instances["kvconf_0.3.0_0.3.1"]  # F2P test_inline_comments_are_stripped exists, failing, in the base
    source = git.Repo(instance.repo_path)
    test_file = source.commit(instance.base_commit).tree["tests/test_parse.py"].data_stream.read().decode()
    rigged = test_file.replace('assert parse("port = 80  # the default") == {"port": 80}', "pass")
    assert rigged != test_file
    graded = _grade(instance, patch_setting(source, instance.base_commit, {"tests/test_parse.py": rigged}), tmp_path)
    assert graded.status == "ok" and graded.patch_applied is True
    assert graded.outcomes["tests/test_parse.py::test_inline_comments_are_stripped"] == "failed"
    assert graded.overridden == ["tests/test_parse.py"]


@pytest.mark.slow
@pytest.mark.parametrize("python", ["3.9", "3.7"])  # 3.7: no importlib.metadata, the launcher uses pytest's backport
def test_an_instance_graded_on_its_own_python_version(instances, tmp_path, python):
    if _pyenv_interpreter(python) is None:
        pytest.skip(f"pyenv has no Python {python} on this machine")
    instance = instances["kvconf_0.3.0_0.3.1"]
    graded = _grade(instance, instance.answers.patch, tmp_path, python=python)
    assert graded.status == "ok" and set(graded.outcomes.values()) == {"passed"}
    assert (tmp_path / "envs").is_dir()
    [env] = [p for p in (tmp_path / "envs").iterdir() if p.is_dir()]
    assert (env / "bin" / f"python{python}").exists()


class ScriptedSandbox:
    """A sandbox whose commands end as scripted: the grader's reading of endings, without running anything."""

    def __init__(self, root: Path, *results):
        from evoci.sandbox.base import ExecResult

        self.workspace, self.results = root, [ExecResult(*r) for r in results]
        self.visible_root = self.report_dir = str(root)

    def exec(self, cmd, **kwargs):
        return self.results.pop(0)

    def read_file(self, path):
        raise FileNotFoundError(path)

    def write_file(self, path, content):
        raise AssertionError("grading writes nothing through the sandbox")

    def cleanup(self):
        pass


def _grade_with(instance: EvoInstance, home: Path, *results):
    request = GradeRequest(base_sha=instance.base_commit, patch=instance.answers.patch,
                           test_patch=instance.answers.test_patch, test_cmds=instance.test_cmds,
                           log_parser=instance.log_parser, targets=list(instance.f2p), timeout_s=60)
    return grade(request, git.Repo(instance.repo_path), home / "tree", lambda root: ScriptedSandbox(root, *results))


def test_how_a_grading_ends_when_the_test_command_does_not_report(instances, tmp_path):
    from evoci.errors import SandboxError

    instance = instances["kvconf_0.3.0_0.3.1"]
    # killed by SIGKILL with a working environment: code that kills its own run is scored, never
    # turned into an unscored retry (only what the harness can prove is infrastructure)
    killed = _grade_with(instance, tmp_path, (-9, "", "", 1.0), (0, "", "", 0.1))
    assert killed.status == "agent_error" and set(killed.outcomes.values()) == {"missing"}
    # no result at all and the environment cannot import pytest: the environment is broken
    with pytest.raises(SandboxError, match="cannot import pytest"):
        _grade_with(instance, tmp_path, (2, "", "", 1.0), (1, "", "ModuleNotFoundError: pytest", 0.1))
    # no result, a working environment: the code broke the run (scored; every target missing)
    broken = _grade_with(instance, tmp_path, (-11, "", "", 1.0), (0, "", "", 0.1))
    assert broken.status == "agent_error" and set(broken.outcomes.values()) == {"missing"}
    # the timeout: recorded, not retried
    late = _grade_with(instance, tmp_path, (None, "", "", 60.0, True))
    assert late.status == "timeout"


def test_patch_lines_that_reach_into_the_runner_are_flagged_outside_test_code():
    from evoci.swebench.grade import sabotage_flags

    patch = ("diff --git a/src/kvconf/parser.py b/src/kvconf/parser.py\n--- a/src/kvconf/parser.py\n+++ b/src/kvconf/parser.py\n"
             "@@ -1 +1,2 @@\n+import _pytest.runner\n x = 1\n"
             "diff --git a/src/json.py b/src/json.py\nnew file mode 100644\n--- /dev/null\n+++ b/src/json.py\n@@ -0,0 +1 @@\n+x = 1\n"
             "diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n+++ b/tests/test_x.py\n"
             "@@ -1 +1,2 @@\n+import pytest\n x = 1\n")
    assert sabotage_flags(patch, ["src", "."]) == [
        "src/kvconf/parser.py: imports the test runner: import _pytest.runner",
        "src/json.py: shadows the module 'json' of the runner or the standard library",
    ]


@pytest.mark.slow
def test_a_runner_plugin_named_in_the_agents_pyproject_does_not_pass_a_failing_test(instances, tmp_path):
    instance = instances["kvconf_0.3.0_0.3.1"]
    source = git.Repo(instance.repo_path)
    pyproject = source.commit(instance.base_commit).tree["pyproject.toml"].data_stream.read().decode()
    plugin = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
              "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n")
    rigged = pyproject.replace('pythonpath = ["src"]', 'pythonpath = ["src"]\naddopts = "-p kvpass"')
    assert rigged != pyproject
    patch = patch_setting(source, instance.base_commit, {"pyproject.toml": rigged, "src/kvpass.py": plugin})
    graded = _grade(instance, patch, tmp_path)
    assert graded.status == "ok" and graded.patch_applied is True
    assert graded.outcomes["tests/test_parse.py::test_inline_comments_are_stripped"] == "failed"
    assert "pyproject.toml" in graded.overridden
    assert graded.integrity_flags  # the hook the patch adds is there for a person to read
