"""Environments: requirements read from dependency files, virtualenvs built once and reused."""

from __future__ import annotations

import importlib.metadata
import json
import sys
import threading

import pytest

from evoci.domain import EnvironmentSpec
from evoci.errors import EnvironmentBuildError, TaskSpecError
from evoci.sandbox.environment import MARKER, LocalEnvironments, resolve_environment

PYTEST = f"pytest=={importlib.metadata.version('pytest')}"
JSON_REPORT = f"pytest-json-report=={importlib.metadata.version('pytest-json-report')}"

REQUIREMENTS_TXT = """\
# runtime
requests>=2.28  # inline comment
-e .
.
-r other.txt
--index-url https://mirror.invalid/simple
git+https://example.invalid/lib.git#egg=lib
numpy==1.26.4 --hash=sha256:abc

attrs ; python_version >= "3.8"
"""

PYPROJECT = """\
[project]
name = "My_Lib"
dependencies = ["requests>=2.28", "click>=8"]

[project.optional-dependencies]
test = ["hypothesis", "my-lib[extra]"]
docs = ["sphinx"]
dev = ["ruff"]
"""

SETUP_CFG = """\
[metadata]
name = my-lib

[options]
install_requires =
    click>=8
    # a comment
    rich
tests_require = pytest-mock

[options.extras_require]
testing = freezegun
"""


def test_requirements_come_from_requirements_txt_pyproject_and_setup_cfg_in_order():
    spec = resolve_environment(
        {"setup.cfg": SETUP_CFG, "pyproject.toml": PYPROJECT, "requirements.txt": REQUIREMENTS_TXT}
    )
    assert spec.requirements == (
        "requests>=2.28",
        "numpy==1.26.4",
        'attrs ; python_version >= "3.8"',
        "click>=8",
        "hypothesis",
        "ruff",
        "rich",
        "pytest-mock",
        "freezegun",
        PYTEST,
        JSON_REPORT,
    )
    assert spec.python is None
    assert set(spec.dependency_files) == {"setup.cfg", "pyproject.toml", "requirements.txt"}


def test_no_dependency_files_still_gives_the_pinned_harness_packages():
    assert resolve_environment({}).requirements == (PYTEST, JSON_REPORT)


def test_a_project_that_constrains_pytest_keeps_its_own_constraint():
    spec = resolve_environment({"requirements-dev.txt": "pytest<8\n"})
    assert spec.requirements == ("pytest<8", JSON_REPORT)


def test_setup_py_is_recorded_but_never_executed(tmp_path):
    setup_py = f"open({str(tmp_path / 'ran')!r}, 'w'); from setuptools import setup; setup(install_requires=['x'])"
    spec = resolve_environment({"setup.py": setup_py})
    assert spec.dependency_files == {"setup.py": setup_py}
    assert spec.requirements == (PYTEST, JSON_REPORT)
    assert not (tmp_path / "ran").exists()


def test_invalid_toml_is_a_task_error_naming_the_file():
    with pytest.raises(TaskSpecError, match=r"pyproject\.toml is not valid TOML"):
        resolve_environment({"pyproject.toml": "[project\nname = 'x'"})


def test_the_same_files_give_the_same_environment_identity():
    a = resolve_environment({"requirements.txt": "requests\n", "pyproject.toml": PYPROJECT})
    b = resolve_environment({"pyproject.toml": PYPROJECT, "requirements.txt": "requests\n"})
    assert a.content_hash == b.content_hash


class CountingEnvironments(LocalEnvironments):
    def __init__(self, root):
        super().__init__(root)
        self.builds = 0

    def _build(self, spec, target):
        self.builds += 1
        super()._build(spec, target)


def test_two_threads_ensuring_one_environment_build_it_once(tmp_path):
    envs = CountingEnvironments(tmp_path)
    spec = EnvironmentSpec()  # no requirements: a real virtualenv, built without pip (fast)
    start = threading.Barrier(2)
    results = []

    def ensure():
        start.wait()
        results.append(envs.ensure(spec))

    threads = [threading.Thread(target=ensure) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert envs.builds == 1
    assert len(results) == 2 and results[0] == results[1]
    assert results[0].python.exists() and (results[0].path / MARKER).exists()


def test_a_half_built_environment_is_rebuilt(tmp_path):
    spec = EnvironmentSpec()
    half_built = tmp_path / spec.content_hash
    (half_built / "bin").mkdir(parents=True)  # killed after venv started, before the marker
    (half_built / "leftover").write_text("partial")
    envs = CountingEnvironments(tmp_path)
    built = envs.ensure(spec)
    assert envs.builds == 1 and not (half_built / "leftover").exists()
    assert json.loads((half_built / MARKER).read_text())["spec_hash"] == spec.content_hash
    assert envs.ensure(spec) == built and envs.builds == 1  # now complete: reused


def test_a_python_version_that_is_not_installed_says_which_to_install(tmp_path):
    with pytest.raises(EnvironmentBuildError, match=r"needs Python 3\.99.*install Python 3\.99"):
        LocalEnvironments(tmp_path).ensure(EnvironmentSpec(python="3.99"))


def test_the_running_python_version_needs_no_other_interpreter(tmp_path):
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    built = LocalEnvironments(tmp_path).ensure(EnvironmentSpec(python=version))
    assert built.python.exists()


def test_a_failing_pip_install_raises_with_pip_output(tmp_path):
    spec = EnvironmentSpec(requirements=("./no-such-folder",))  # fails locally, without the index
    with pytest.raises(EnvironmentBuildError, match=r"(?s)could not install the requirements.*no-such-folder"):
        LocalEnvironments(tmp_path).ensure(spec)
    assert not (tmp_path / spec.content_hash).exists()  # no half-built leftovers


def test_a_pyenv_interpreter_is_found_by_version_newest_patch_first(tmp_path, monkeypatch):
    from evoci.sandbox.environment import _interpreter

    for version in ("3.97.2", "3.97.10", "3.97.dev"):
        python = tmp_path / "versions" / version / "bin" / "python3.97"
        python.parent.mkdir(parents=True)
        python.symlink_to(sys.executable)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    monkeypatch.setenv("PATH", "/nonexistent")
    assert _interpreter("3.97") == tmp_path / "versions" / "3.97.10" / "bin" / "python3.97"
    with pytest.raises(EnvironmentBuildError, match=r"needs Python 3\.96.*pyenv install 3\.96"):
        _interpreter("3.96")
