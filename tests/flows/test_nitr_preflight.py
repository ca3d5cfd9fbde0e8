"""A sandbox that cannot build a probe is the harness's fault, found before any agent is graded.

Without GoogleTest (a NITR checkout whose ``third_party/googletest`` submodule was never
fetched; a Docker image without the C++ tools) even the reference solution would be an E
and the run would look complete. The preflight configures the pristine starter code first:
the probe ends ``environment_error`` (unscored, in ``run_completeness``, a failure row that
says what to install), the flow fails so it can be retried, and once the toolchain is there
the same command grades it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evoci.domain import SandboxConfig
from evoci.flows.nitr import nitr
from tests.flows.helpers import query
from tests.flows.test_nitr import HAS_CPP, categories, reference_config
from tests.nitr.conftest import one_project_checkout  # noqa: F401  (fixtures)
from tests.sandbox.docker.conftest import base_image, docker_client  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]
VENDORED = """  add_subdirectory(${CMAKE_SOURCE_DIR}/third_party/googletest ${CMAKE_BINARY_DIR}/_deps/gtest EXCLUDE_FROM_ALL)
  add_executable(case202_percent_tests 202.percent-clamp/tests/test_percent.cc)
  target_link_libraries(case202_percent_tests PRIVATE case_lib gtest_main)"""


def assert_environment_error(db: Path, run_id: str, probe: str) -> None:
    assert query(db, "select status from tasks where run_id = ? and task_id = ?", [run_id, probe]) == [
        ("environment_error",)]
    [(node, kind, message)] = query(db, "select node, kind, message from failures where run_id = ? and task_id = ?",
                                    [run_id, probe])
    assert (node, kind) == ("preflight", "environment") and "install CMake, a C++ compiler and GoogleTest" in message
    assert query(db, "select count(*) from iterations where run_id = ?", [run_id]) == [(0,)]  # no agent was graded
    [(complete, reasons)] = query(db, "select complete, unscored_reasons from run_completeness where run_id = ?", [run_id])
    assert not complete and reasons == {"environment_error": 1}


@pytest.mark.skipif(not HAS_CPP or not Path("/usr/src/googletest/CMakeLists.txt").is_file(),
                    reason="needs cmake, g++ and GoogleTest's sources (scripts/cpp-tools.sh installs them)")
def test_a_checkout_without_its_googletest_submodule_is_an_environment_error_then_retried(tmp_path, one_project_checkout):
    cmake = one_project_checkout / "evaluator" / "CMakeLists.txt"
    text = cmake.read_text()
    old = text[text.index("  find_package(GTest REQUIRED)"):text.index("  add_test(NAME case202_percent_tests")]
    cmake.write_text(text.replace(old, VENDORED + "\n"))
    (one_project_checkout / "third_party" / "googletest").mkdir(parents=True)  # a submodule never fetched
    db, home = tmp_path / "results.duckdb", str(tmp_path / "home")
    config = reference_config("env", {"202.percent-clamp": "intended"})
    with pytest.raises(RuntimeError, match="1 probe\\(s\\) failed"):
        nitr(f"nitr:{one_project_checkout}", config, select={"id": ["202"]}, home=home, db=str(db))
    assert_environment_error(db, "env", "202.percent-clamp")
    shutil.rmtree(one_project_checkout / "third_party" / "googletest")
    shutil.copytree("/usr/src/googletest", one_project_checkout / "third_party" / "googletest")
    nitr(f"nitr:{one_project_checkout}", config, select={"id": ["202"]}, home=home, db=str(db))  # the same command
    assert categories(db, "env") == {"202.percent-clamp": "Pass"}
    assert query(db, "select complete from run_completeness where run_id = 'env'") == [(True,)]


@pytest.mark.docker
def test_an_image_without_the_cpp_tools_is_an_environment_error(tmp_path, base_image):
    from evoci.sandbox.docker.options import DEFAULT_BASE_IMAGE

    db = tmp_path / "results.duckdb"
    config = reference_config("img", "intended").model_copy(update={"sandbox": SandboxConfig(
        kind="docker", options={"base_image": DEFAULT_BASE_IMAGE})})  # python only: no cmake, g++ or GoogleTest
    with pytest.raises(RuntimeError, match="1 probe\\(s\\) failed"):
        nitr("builtin", config, select={"id": ["005"]}, home=str(tmp_path / "home"), db=str(db))
    assert_environment_error(db, "img", "005.percent-clamp-reuse-cpp")
