"""The nitr flow end to end: built-in probes, reference solutions, real evaluators, the views.

Every reference solution of the built-in suite must land in the category its
``references/<probe>/expected.json`` names, through the real flow (Prefect, sandbox,
DuckDB), and the rate views must give the hand-computed numbers.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evoci.domain import AgentConfig, RunConfig
from evoci.flows.nitr import nitr
from evoci.nitr.agents import SOLUTIONS
from evoci.nitr.suites import PROBES
from tests.flows.helpers import query
from tests.nitr.conftest import one_project_checkout, public_checkout  # noqa: F401  (fixtures)

pytestmark = pytest.mark.usefixtures("prefect_server")

HAS_CPP = bool(shutil.which("cmake") and shutil.which("g++") and Path("/usr/include/gtest/gtest.h").is_file())


def expected(probe_id: str) -> dict[str, str]:
    return json.loads((PROBES / "references" / probe_id / "expected.json").read_text())


def reference_config(run_id: str, solution) -> RunConfig:
    agent = AgentConfig(kind="reference", options={"solution": solution})
    return RunConfig(run_id=run_id, protocol="nitr", programmer=agent, architect=agent, node_retries=0)


def categories(db: Path, run_id: str) -> dict[str, str]:
    return dict(query(db, "select task_id, category from nitr_probes where run_id = ?", [run_id]))


@pytest.mark.slow
@pytest.mark.parametrize("solution", SOLUTIONS)
def test_each_python_reference_lands_in_its_category(tmp_path, solution):
    db = tmp_path / "results.duckdb"
    summaries = nitr("builtin", reference_config(f"ref-{solution}", solution), select={"language": ["python"]},
                     home=str(tmp_path / "home"), db=str(db))
    got = categories(db, f"ref-{solution}")
    assert len(got) == 4
    assert got == {probe: expected(probe)[solution] for probe in got}
    assert {s.probe_id: s.category for s in summaries} == got
    # the multi-step probe ran its three steps, graded once (at the end)
    steps = query(db, "select iteration, status from iterations where run_id = ? and task_id = '004.report-exporters' "
                      "order by iteration", [f"ref-{solution}"])
    final = "build_error" if solution == "no-build" else "ok"
    assert steps == [(1, "not_graded"), (2, "not_graded"), (3, final)]
    if solution == "intended":  # the run's page in the Prefect UI shows the probes and the rates
        assert "pass rate **1.000**" in latest_artifact(f"evoci-ref-{solution}-summary")
        assert "004.report-exporters" in latest_artifact(f"evoci-ref-{solution}-probes")


def latest_artifact(key: str) -> str:
    from prefect import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])))
    return str(found[-1].data)


@pytest.mark.slow
@pytest.mark.skipif(not HAS_CPP, reason="needs cmake, g++ and GoogleTest (scripts/cpp-tools.sh installs them)")
def test_cpp_references_and_hand_computed_rates(tmp_path):
    """One run mixing solutions: each probe's category, then every rate computed by hand."""
    db = tmp_path / "results.duckdb"
    mix = {"001.invoice-summary-reuse": "intended", "002.rejection-count-isolation": "broken",
           "003.retry-setting-locality": "shortcut", "004.report-exporters": "no-build",
           "005.percent-clamp-reuse-cpp": "shortcut"}
    nitr("builtin", reference_config("mixed", mix), home=str(tmp_path / "home"), db=str(db))
    assert categories(db, "mixed") == {
        "001.invoice-summary-reuse": "Pass", "002.rejection-count-isolation": "B",
        "003.retry-setting-locality": "S", "004.report-exporters": "E", "005.percent-clamp-reuse-cpp": "S",
    }
    # 5 evaluated: Pass 1, S 2, B 1, E 1 → pass 1/5, S-rate 2/5, S among functional passes 2/3
    assert query(db, "select evaluated, n_pass, n_f, n_s, n_b, n_e, pass_rate, s_rate, b_rate, e_rate, "
                     "s_share_of_functional_passes from nitr_runs where run_id = 'mixed'") == [
        (5, 1, 0, 2, 1, 1, 0.2, 0.4, 0.2, 0.2, 2 / 3)]
    # the run knows its suite held 5 probes, so a run stopped early would say it is partial
    assert query(db, "select dataset_tasks, tasks_expected, tasks_unscored, complete from runs "
                     "join run_completeness using (run_id) where run_id = 'mixed'") == [(5, 5, 0, True)]
    # D2 holds the Python reuse probe (Pass) and the C++ one (S): 1/2 each
    assert query(db, "select dimension, evaluated, n_pass, n_s, pass_rate, s_rate from nitr_by_dimension "
                     "where run_id = 'mixed' order by dimension") == [
        ("D1", 1, 0, 1, 0.0, 1.0), ("D2", 2, 1, 1, 0.5, 0.5), ("D4", 1, 0, 0, 0.0, 0.0), ("D9", 1, 0, 0, 0.0, 0.0)]
    assert query(db, "select granularity, evaluated, n_pass, pass_rate from nitr_by_granularity "
                     "where run_id = 'mixed' order by granularity") == [("micro", 4, 1, 0.25), ("multi-step", 1, 0, 0.0)]


@pytest.mark.slow
@pytest.mark.skipif(not HAS_CPP, reason="needs cmake, g++ and GoogleTest (scripts/cpp-tools.sh installs them)")
@pytest.mark.parametrize("solution", ["intended", "broken", "no-build"])
def test_cpp_probe_builds_runs_ctest_and_is_categorised(tmp_path, solution):
    db = tmp_path / "results.duckdb"
    nitr("builtin", reference_config(f"cpp-{solution}", solution), select={"language": ["cpp"]},
         home=str(tmp_path / "home"), db=str(db))
    assert categories(db, f"cpp-{solution}") == {"005.percent-clamp-reuse-cpp": expected("005.percent-clamp-reuse-cpp")[solution]}
    grade = json.loads(next((tmp_path / "home" / "runs").rglob("grade.json")).read_text())
    ran = {m["name"]: m["passed"] for m in grade["modules"]}
    if solution != "no-build":
        assert ran["percent_tests"] is (solution == "intended")  # ctest ran the GoogleTest binary


@pytest.mark.slow
@pytest.mark.skipif(not HAS_CPP, reason="needs cmake, g++ and GoogleTest (scripts/cpp-tools.sh installs them)")
def test_a_checkout_in_the_public_layout_runs_python_and_cpp_cases(tmp_path, public_checkout):
    """`evoci run nitr:<checkout>`: its pipelines use every module; unusable cases are recorded, the rest run."""
    db = tmp_path / "results.duckdb"
    config = reference_config("public", {"101.retry-setting-python": "shortcut", "102.percent-clamp": "intended"})
    nitr(f"nitr:{public_checkout}", config, home=str(tmp_path / "home"), db=str(db))
    assert categories(db, "public") == {"101.retry-setting-python": "S", "102.percent-clamp": "Pass"}
    [(dataset,)] = query(db, "select dataset from runs where run_id = 'public'")
    assert dataset.startswith("nitr-NITR-")  # the checkout's name plus its probes' identity
    bad = query(db, "select kind, message from failures where run_id = 'public' order by message")
    assert [kind for kind, _ in bad] == ["input", "input"]
    assert "103.gap-in-steps" in bad[0][1] and "104.not-in-matrix" in bad[1][1]


@pytest.mark.slow
@pytest.mark.skipif(not HAS_CPP, reason="needs cmake, g++ and GoogleTest (scripts/cpp-tools.sh installs them)")
def test_a_checkout_built_as_one_cmake_project_is_graded_through_its_own_ctest_registration(tmp_path, one_project_checkout):
    """The public suite's shape: the checkout's top-level CMake project registers each case's tests."""
    db = tmp_path / "results.duckdb"
    config = reference_config("one", {"201.retry-setting": "broken", "202.percent-clamp": "shortcut"})
    nitr(f"nitr:{one_project_checkout}", config, home=str(tmp_path / "home"), db=str(db))
    assert categories(db, "one") == {"201.retry-setting": "F", "202.percent-clamp": "S"}


@pytest.mark.slow
def test_the_command_line_runs_and_reports_a_nitr_run(tmp_path, capsys):
    from evoci.cli import main

    home = tmp_path / "home"
    code = main(["run", "nitr", "--select", "id=001,003", "--agent", "reference", "--agent-option", "solution=shortcut",
                 "--run-id", "cli", "--home", str(home)])
    assert code == 0
    out = capsys.readouterr().out
    assert "001.invoice-summary-reuse" in out and "pass rate 0.000 · S-rate 1.000" in out
    assert categories(home / "evoci.duckdb", "cli") == {"001.invoice-summary-reuse": "S", "003.retry-setting-locality": "S"}
    assert main(["report", "--run-id", "cli", "--db", str(home / "evoci.duckdb")]) == 0
    assert "S 2" in capsys.readouterr().out
