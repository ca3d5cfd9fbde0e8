"""run_pytest: what a test run of a codebase reports, and who is blamed when it cannot run."""

from __future__ import annotations


import pytest

from evoci.domain import EnvironmentSpec, TaskSpec
from evoci.domain import TestStatus as Status  # a name pytest does not try to collect
from evoci.errors import SandboxError, TaskSpecError
from evoci.grading.run import DETAIL_LIMIT
from evoci.swe_ci.grade import run_pytest
from evoci.sandbox import LocalEnvironments, LocalSandbox
from evoci.sandbox.environment import resolve_environment
from evoci.sandbox.bwrap import BwrapOptions
from tests.sandbox import built_env, kill_if_alive, make_codebase, process_gone  # noqa: F401

TASK = TaskSpec(task_id="t", repo=".", base_ref="base", oracle_ref="oracle")

MIX = {
    "src/calc.py": """
        def add(a, b):
            return a + b
    """,
    "tests/test_mix.py": """
        import pytest
        from calc import add

        @pytest.fixture
        def broken():
            raise RuntimeError("fixture exploded")

        @pytest.fixture
        def bad_teardown():
            yield
            raise RuntimeError("teardown exploded")

        def test_pass():
            assert add(1, 2) == 3

        def test_fail():
            assert add(1, 2) == 4

        def test_error(broken):
            pass

        def test_teardown_error(bad_teardown):
            pass

        @pytest.mark.skip(reason="not today")
        def test_skip():
            pass

        @pytest.mark.xfail(reason="known bug")
        def test_xfail():
            assert False

        @pytest.mark.xfail(reason="fixed already")
        def test_xpass():
            pass

        def test_long_failure():
            assert "a" * 50_000 == "b"
    """,
}


@pytest.fixture
def run(tmp_path, built_env):  # noqa: F811
    """Write a codebase and run its tests as the test node does: isolated, on a private copy.

    ``isolated=False`` runs them on the host (the ``host`` sandbox), for tests that watch
    the processes a run leaves behind from outside.
    """

    def run(files, *, task=TASK, timeout=60.0, environment=built_env, isolated=True, runner_config="[pytest]\n"):
        workspace = make_codebase(tmp_path / "ws", files)
        options = BwrapOptions() if isolated else None
        sandbox = LocalSandbox(workspace, environment, isolation=options, ephemeral=isolated)
        return run_pytest(sandbox, task, timeout=timeout, output_limit=200_000, runner_config=runner_config)

    return run


def test_a_mixed_suite_reports_each_outcome_exactly(run, tmp_path):
    report = run(MIX)
    assert report.status is Status.OK and report.exit_code == 1
    assert report.outcomes == {
        "tests/test_mix.py::test_pass": "passed",
        "tests/test_mix.py::test_fail": "failed",
        "tests/test_mix.py::test_error": "error",
        "tests/test_mix.py::test_teardown_error": "error",
        "tests/test_mix.py::test_skip": "skipped",
        "tests/test_mix.py::test_xfail": "xfailed",
        "tests/test_mix.py::test_xpass": "xpassed",
        "tests/test_mix.py::test_long_failure": "failed",
    }
    assert set(report.details) == set(report.outcomes) - {"tests/test_mix.py::test_pass"}
    assert "assert 3 == 4" in report.details["tests/test_mix.py::test_fail"]
    assert "fixture exploded" in report.details["tests/test_mix.py::test_error"]
    assert "teardown exploded" in report.details["tests/test_mix.py::test_teardown_error"]
    assert "not today" in report.details["tests/test_mix.py::test_skip"]
    assert len(report.details["tests/test_mix.py::test_long_failure"]) < DETAIL_LIMIT + 100
    assert report.collection_errors == {}
    assert "2 failed, 2 passed" in report.output_tail and report.duration_s > 0
    # The run wrote nothing to the host: the only harness file is the configuration it was given.
    assert [p.name for p in (tmp_path / "ws" / ".evoci").iterdir()] == ["pytest.ini"]


def test_a_syntax_error_in_the_codebase_is_the_agents_error(run):
    report = run({
        "src/calc.py": "def add(a, b)\n    return a + b\n",
        "tests/test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    })
    assert report.status is Status.AGENT_ERROR and report.exit_code == 2
    assert report.outcomes_for(["tests/test_calc.py::test_add"]) == {"tests/test_calc.py::test_add": "missing"}
    assert "SyntaxError" in report.collection_errors["tests/test_calc.py"]


def test_a_collection_crash_in_one_module_stops_the_run(run):
    report = run({
        "tests/test_ok.py": "def test_ok():\n    pass\n",
        "tests/test_broken.py": "raise ImportError('cannot import name frobnicate')\n",
    })
    assert report.status is Status.AGENT_ERROR
    assert list(report.collection_errors) == ["tests/test_broken.py"]
    assert "frobnicate" in report.collection_errors["tests/test_broken.py"]
    assert report.outcomes_for(["tests/test_ok.py::test_ok"]) == {"tests/test_ok.py::test_ok": "missing"}


def test_a_conftest_that_kills_pytest_is_the_agents_error(run, tmp_path):
    report = run({
        "tests/conftest.py": "import os\nos._exit(3)\n",
        "tests/test_ok.py": "def test_ok():\n    pass\n",
    })
    assert report.status is Status.AGENT_ERROR and report.exit_code == 3
    assert report.outcomes == {}
    assert "without a report" in report.output_tail


def test_a_conftest_importing_broken_code_is_the_agents_error(run):
    report = run({
        "src/calc.py": "raise RuntimeError('half-finished refactor')\n",
        "tests/conftest.py": "import calc\n",
        "tests/test_ok.py": "def test_ok():\n    pass\n",
    })
    assert report.status is Status.AGENT_ERROR and report.exit_code == 4
    assert "half-finished refactor" in report.output_tail


def test_a_segfault_in_the_codebase_is_the_agents_error(run):
    report = run({"tests/test_crash.py": "import os, signal\n\ndef test_crash():\n    os.kill(os.getpid(), signal.SIGSEGV)\n"})
    assert report.status is Status.AGENT_ERROR and report.exit_code in (-11, 139)
    assert report.outcomes == {}


def test_a_run_that_kills_itself_is_the_agents_error_not_an_infrastructure_fault(run):
    # The code under test must not turn its own failure into an unscored retry: only what the
    # harness can prove (the canary failing, the sandbox gone, its own kill) is infrastructure.
    report = run({"tests/test_kill.py": "import os, signal\n\ndef test_kill():\n    os.kill(os.getpid(), signal.SIGKILL)\n"})
    assert report.status is Status.AGENT_ERROR and report.outcomes == {}


def test_no_tests_collected_is_the_agents_error(run):
    report = run({"tests/test_nothing.py": "X = 1\n"})
    assert report.status is Status.AGENT_ERROR and report.exit_code == 5 and report.outcomes == {}


def test_a_hanging_suite_times_out_and_its_processes_are_killed(run, tmp_path):
    pid_file = tmp_path / "child.pid"
    report = run(
        {
            "tests/test_hang.py": f"""
                import subprocess, time

                def test_hang():
                    child = subprocess.Popen(["sleep", "1000"])
                    open({str(pid_file)!r}, "w").write(str(child.pid))
                    time.sleep(1000)
            """
        },
        timeout=2,
        isolated=False,
    )
    pid = int(pid_file.read_text())
    try:
        assert report.status is Status.TIMEOUT and report.exit_code is None
        assert report.outcomes == {}
        assert process_gone(pid)
    finally:
        if not process_gone(pid, 0):
            kill_if_alive(pid)


def test_secrets_in_the_harness_environment_do_not_reach_the_tests(run, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-123")
    monkeypatch.setenv("PREFECT_API_KEY", "pnu_x")
    report = run({
        "tests/test_env.py": """
            import os

            def test_no_secret():
                assert "OPENAI_API_KEY" not in os.environ and "PREFECT_API_KEY" not in os.environ
                assert "sk-live-123" not in repr(os.environ)

            def test_import_path():
                assert os.environ["PYTHONPATH"] == "/workspace/src:/workspace"
        """
    })
    assert report.outcomes == {"tests/test_env.py::test_no_secret": "passed", "tests/test_env.py::test_import_path": "passed"}


def test_a_usage_error_is_reported_for_the_repair_step_to_read(run):
    # On the oracle's run, evoci.sandbox.repair reads it (an unknown --cov means pytest-cov is missing).
    task = TASK.model_copy(update={"test_command": ("python", "-m", "pytest", "tests", "--cov=calc")})
    report = run({"tests/test_ok.py": "def test_ok():\n    pass\n"}, task=task)
    assert report.status is Status.AGENT_ERROR and report.exit_code == 4
    assert "unrecognized arguments: --cov=calc" in report.output_tail


def test_a_test_command_that_is_not_pytest_is_refused(run):
    task = TASK.model_copy(update={"test_command": ("make", "test")})
    with pytest.raises(TaskSpecError, match="does not run pytest"):
        run({"tests/test_ok.py": "def test_ok():\n    pass\n"}, task=task)


def test_an_environment_without_pytest_is_an_infrastructure_error(run, tmp_path):
    bare = LocalEnvironments(tmp_path / "envs").ensure(EnvironmentSpec())  # no pytest installed
    with pytest.raises(SandboxError, match="canary"):
        run({"tests/test_ok.py": "def test_ok():\n    pass\n"}, environment=bare)


def _plugin_wheel(folder, name: str, value: str):
    """A wheel of package ``name`` (``VALUE = value``) that declares ``name.plugin`` a pytest plugin,
    as dvc declares ``dvc.testing.plugin``: written by hand, so installing it needs no build tools."""
    import base64
    import hashlib
    import zipfile

    files = {
        f"{name}/__init__.py": f"VALUE = {value!r}\n",
        f"{name}/plugin.py": f"import pytest\n\nimport {name}\n\n\n@pytest.fixture\ndef project_value():\n    return {name}.VALUE\n",
        f"{name}-1.0.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
        f"{name}-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: evoci-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{name}-1.0.dist-info/entry_points.txt": f"[pytest11]\n{name} = {name}.plugin\n",
    }
    record = "".join(f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
                     f"{len(text.encode())}\n" for path, text in files.items())
    files[f"{name}-1.0.dist-info/RECORD"] = record + f"{name}-1.0.dist-info/RECORD,,\n"
    wheel = folder / f"{name}-1.0-py3-none-any.whl"
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def test_a_plugin_the_project_declares_tests_the_trees_code_not_the_installed_copy(run, tmp_path):
    # The environment holds the project as released (its plugin declared by metadata); the tree
    # is the agent's version of it. The tests must import the tree's package, plugin included.
    wheel = _plugin_wheel(tmp_path / "wheels", "plugproj", "installed")
    env = LocalEnvironments(tmp_path / "envs").ensure(resolve_environment({}).with_requirements([str(wheel)]))
    report = run({
        "plugproj/__init__.py": "VALUE = 'tree'\n",
        "plugproj/plugin.py": "import pytest\n\nimport plugproj\n\n\n@pytest.fixture\ndef project_value():\n"
                              "    return plugproj.VALUE + ' (plugin)'\n",
        # The fixture comes from the project's plugin, which pytest must still load.
        "tests/test_value.py": "import plugproj\n\n\ndef test_the_tree_is_tested(project_value):\n"
                               "    assert (plugproj.VALUE, project_value) == ('tree', 'tree (plugin)')\n",
    }, environment=env)
    assert report.status is Status.OK, report.output_tail
    assert report.outcomes == {"tests/test_value.py::test_the_tree_is_tested": "passed"}, report.output_tail


def test_an_environment_plugin_loads_where_the_projects_warnings_are_errors(run, tmp_path):
    # The launcher imports the environment's plugins before pytest starts, so pytest cannot rewrite
    # them and says so; a project whose filterwarnings is `error` (pydantic's) must still run.
    wheel = _plugin_wheel(tmp_path / "wheels", "envplug", "installed")
    env = LocalEnvironments(tmp_path / "envs").ensure(resolve_environment({}).with_requirements([str(wheel)]))
    report = run({
        "tests/test_value.py": "def test_the_plugin_is_loaded(project_value):\n    assert project_value == 'installed'\n",
    }, environment=env, runner_config="[pytest]\nfilterwarnings =\n    error\n")
    assert report.status is Status.OK, report.output_tail
    assert report.outcomes == {"tests/test_value.py::test_the_plugin_is_loaded": "passed"}, report.output_tail


def test_an_expected_failure_is_the_tests_to_declare_never_the_codes(run):
    report = run({
        "src/calc.py": """
            def add(a, b):
                from _pytest.outcomes import XFailed
                raise XFailed("not written yet")  # the code under test dressing its failure as expected
        """,
        "tests/test_calc.py": """
            import pytest
            from calc import add

            def test_add():
                assert add(1, 2) == 3

            def test_later():
                pytest.xfail("the test itself says so")

            @pytest.mark.xfail(reason="known bug")
            def test_marked():
                assert add(1, 1) == 3
        """,
    })
    assert report.outcomes == {"tests/test_calc.py::test_add": "failed", "tests/test_calc.py::test_later": "xfailed",
                               "tests/test_calc.py::test_marked": "xfailed"}
    assert [f for f in report.integrity_flags if "expected to fail" in f] == [
        "the tested code made 1 test(s) expected to fail (an XFailed raised outside the tests), graded failed: "
        "tests/test_calc.py::test_add"]


def test_plugins_the_tests_declare_are_pytests_own_and_a_module_registered_by_hand_is_flagged(run):
    # A conftest names a plugin module of the tree, which names another (pytest registers both as
    # themselves): their hooks are the tests' own. The code under test registering one of its own
    # modules as a plugin by hand is not: flagged, as any hook the tested code registers.
    files = {
        "src/calc.py": "def add(a, b):\n    return a + b\n",
        "tests/conftest.py": "pytest_plugins = ['helpers.hooks']\n",
        "tests/helpers/__init__.py": "",
        "tests/helpers/hooks.py": "pytest_plugins = ('helpers.more',)\n\n\n"
                                  "def pytest_collection_modifyitems(items):\n    items.sort(key=lambda i: i.name)\n",
        "tests/helpers/more.py": "def pytest_report_header(config):\n    return 'more'\n",
        "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    }
    task = TASK.model_copy(update={"pythonpath": ["src", "tests", "."]})
    honest = run(files, task=task)
    assert honest.outcomes == {"tests/test_calc.py::test_add": "passed"}, honest.output_tail
    assert not honest.integrity_flags

    by_hand = run({**files, "src/calc.py": files["src/calc.py"] + (
        "\n\nimport gc\nimport sys\nimport _pytest.config\n\n\ndef pytest_runtest_logreport(report):\n    pass\n\n\n"
        "_manager = [o for o in gc.get_objects() if isinstance(o, _pytest.config.PytestPluginManager)]\n"
        "_manager and _manager[0].register(sys.modules[__name__])\n")}, task=task)
    assert by_hand.outcomes == {"tests/test_calc.py::test_add": "passed"}
    assert any("pytest hook pytest_runtest_logreport" in flag for flag in by_hand.integrity_flags), by_hand.integrity_flags


# How the attacks below reach pytest's plugin manager: through their callers' frames (in_process_plugin's way).
FIND_MANAGER = '''
import inspect as _inspect
def _manager():
    frame = _inspect.currentframe()
    while frame is not None:
        owner = frame.f_locals.get("self")
        manager = getattr(owner, "pluginmanager", None) or getattr(getattr(owner, "config", None), "pluginmanager", None)
        if manager is not None and hasattr(manager, "register"):
            return manager
        frame = frame.f_back
    return None
'''


# A plugin whose hook is compiled under the file name of a module of the environment (the standard
# library's os.py): the code object says it is the environment's code. Nothing of it is in the scan's
# patterns either (no `def pytest_`, no `_pytest`, no `gc.get_objects`, no `__code__`).
SPOOFED_FILE = FIND_MANAGER + '''
import os as _os
def _settle():
    manager = _manager()
    if manager is None:
        return
    namespace = {}
    exec(compile("def logreport(report):\\n    if report.outcome == 'failed':\\n"
                 "        report.outcome, report.longrepr = 'passed', None\\n", _os.__file__, "exec"), namespace)
    class Settle:
        pass
    setattr(Settle, "pytest" + "_runtest_logreport", staticmethod(namespace["logreport"]))
    manager.register(Settle(), "settle")
_settle()
'''

# The tree's own module registered by hand, before pytest imports the plugin the reference's conftest
# declares, under that declared name: pytest then finds the name taken and registers nothing itself.
UNDER_A_DECLARED_NAME = '''
import sys as _sys
def _logreport(report):
    if report.outcome == "failed":
        report.outcome, report.longrepr = "passed", None
_FIRST = dict(tryfirst=True, trylast=False, hookwrapper=False, wrapper=False, optionalhook=False, specname=None)
setattr(_logreport, "pytest" + "_impl", _FIRST)  # before the report plugin's and the tally's
def _take_the_name():
    globals()["pytest" + "_runtest_logreport"] = _logreport
    frame = _sys._getframe()
    while frame is not None:
        manager = getattr(frame.f_locals.get("self"), "pluginmanager", None) or frame.f_locals.get("pluginmanager")
        if manager is not None and hasattr(manager, "register"):
            manager.register(_sys.modules[__name__], "helpers.hooks")
            return
        frame = frame.f_back
_take_the_name()
'''


# A hook implementation added to pytest's hook caller by hand, in the name of the harness's own tally
# plugin (found among the registered plugins, its class made from one already there): the listing took
# every hook of the tally's object as the tally's.
AS_THE_TALLY = FIND_MANAGER + '''
def _logreport(report):
    if report.outcome == "failed":
        report.outcome, report.longrepr = "passed", None
def _as_the_tally():
    manager = _manager()
    if manager is None:
        return
    tally = [p for p in manager.get_plugins() if type(p).__name__ == "EvociTally"]
    caller = getattr(manager.hook, "pytest" + "_runtest_logreport")
    if tally:
        model = caller.get_hookimpls()[0]
        opts = dict(model.opts, tryfirst=True, trylast=False, wrapper=False, hookwrapper=False)
        caller._add_hookimpl(type(model)(tally[0], "evoci-tally", _logreport, opts))
_as_the_tally()
'''


# The in_process_plugin attack, its plugin unregistered when the session ends: the listing, read after
# pytest returned, found nothing.
GONE_BY_THE_END = FIND_MANAGER + '''
def _settle():
    manager = _manager()
    if manager is None:
        return
    class Settle:
        pass
    def logreport(report):
        if report.outcome == "failed":
            report.outcome, report.longrepr = "passed", None
    def unconfigure(config):
        manager.unregister(settle)
    setattr(Settle, "pytest" + "_runtest_logreport", staticmethod(logreport))
    setattr(Settle, "pytest" + "_unconfigure", staticmethod(unconfigure))
    settle = Settle()
    manager.register(settle, "settle")
_settle()
'''


@pytest.mark.parametrize("attack", ["spoofed_file", "taken_name", "as_the_tally", "gone_by_the_end"])
def test_a_hook_that_claims_another_modules_file_or_a_plugins_name_is_flagged(run, attack):
    # Both changed the outcome unflagged: their hook ran before the report plugin's and the tally's.
    files = {
        "src/calc.py": "def add(a, b):\n    return a + b\n",
        # the tree's code runs while the conftest is imported (taken_name), or while the test module is
        "tests/conftest.py": ("import calc\n\n" if attack == "taken_name" else "") + "pytest_plugins = ['helpers.hooks']\n",
        "tests/helpers/__init__.py": "",
        "tests/helpers/hooks.py": "def pytest_report_header(config):\n    return 'hooks'\n",
        "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 5\n",
    }
    task = TASK.model_copy(update={"pythonpath": ["src", "tests", "."]})
    attacked = files["src/calc.py"] + {"spoofed_file": SPOOFED_FILE, "taken_name": UNDER_A_DECLARED_NAME,
                                       "as_the_tally": AS_THE_TALLY, "gone_by_the_end": GONE_BY_THE_END}[attack]
    report = run({**files, "src/calc.py": attacked}, task=task)
    assert report.outcomes == {"tests/test_calc.py::test_add": "passed"}, report.output_tail  # the hook ran
    assert any("pytest hook pytest_runtest_logreport" in flag for flag in report.integrity_flags), report.integrity_flags
