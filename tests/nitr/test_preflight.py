"""The preflight, run for real in the local sandbox: what it proves and what it names.

A probe whose pipeline starts a program the sandbox lacks, or whose CMake project does not
configure on the pristine starter code, is an environment error naming what to install;
a probe that configures leaves a build template (its CMake cache) for the gradings.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.nitr import preflight
from evoci.nitr.loader import load_suite
from evoci.sandbox import open_sandbox
from evoci.settings import Paths

HAS_CPP = bool(shutil.which("cmake") and shutil.which("g++") and Path("/usr/include/gtest/gtest.h").is_file())


def run_preflight(probe, tmp_path: Path) -> Path:
    root = preflight.pristine_tree(probe, tmp_path / "tree", tmp_path / "starter")
    sandbox = open_sandbox(SandboxConfig(), root, EnvironmentSpec(), Paths(home=tmp_path / "home"))
    try:
        preflight.check(probe, sandbox, root)
        preflight.keep_template(probe, sandbox, root, tmp_path / "template")
    finally:
        sandbox.cleanup()
    return tmp_path / "template"


def test_a_program_the_sandbox_lacks_is_named_with_what_to_install(tmp_path, public_checkout):
    pipeline = public_checkout / "evaluator" / "101.retry-setting-python" / "pipeline.json"
    data = json.loads(pipeline.read_text())
    data["modules"][1]["command"][0] = "nitr-no-such-runner"
    pipeline.write_text(json.dumps(data))
    probe = load_suite(public_checkout, {"id": ["101"]}).probes[0]
    with pytest.raises(preflight.NitrEnvironmentError, match="grading runs 'nitr-no-such-runner', which the sandbox "
                                                             "does not have — install CMake"):
        run_preflight(probe, tmp_path)


@pytest.mark.skipif(not HAS_CPP, reason="needs cmake, g++ and GoogleTest (scripts/cpp-tools.sh installs them)")
def test_a_project_that_cannot_find_googletest_is_an_environment_error_and_one_that_can_leaves_a_template(
        tmp_path, public_checkout):
    probe = load_suite(public_checkout, {"id": ["102"]}).probes[0]
    template = run_preflight(probe, tmp_path / "ok")
    assert (template / "CMakeCache.txt").is_file()
    cmake = public_checkout / "evaluator" / "percent-clamp" / "CMakeLists.txt"
    cmake.write_text(cmake.read_text().replace("find_package(GTest REQUIRED)", "find_package(NoSuchGTest REQUIRED)"))
    probe = load_suite(public_checkout, {"id": ["102"]}).probes[0]
    with pytest.raises(preflight.NitrEnvironmentError, match="does not configure on the pristine starter code"):
        run_preflight(probe, tmp_path / "bad")


def test_a_python_probe_needs_only_its_programs(tmp_path):
    """File modules start nothing; a probe whose commands configure nothing leaves no template."""
    from evoci.nitr.suites import PROBES

    probe = load_suite(PROBES, {"id": ["003"]}).probes[0]
    assert not run_preflight(probe, tmp_path).exists()
