"""Environment self-repair: a test suite's missing imports become requirements, then a rebuild."""

from __future__ import annotations

import pytest

from evoci.domain import EnvironmentSpec, TaskSpec
from evoci.domain import TestReport as Report
from evoci.domain import TestStatus as Status
from evoci.swe_ci.grade import run_pytest
from evoci.sandbox.repair import RepairRecord, distribution_for, missing_modules, repair_step, repaired


def _report(**fields) -> Report:
    return Report(status=Status.AGENT_ERROR, **fields)


def test_missing_modules_are_read_from_collection_errors_and_details():
    report = _report(
        collection_errors={"tests/test_a.py": "E   ModuleNotFoundError: No module named 'yaml'"},
        details={
            "tests/test_b.py::test_x": "ImportError: No module named dateutil.parser",
            "tests/test_c.py::test_y": "ModuleNotFoundError: No module named 'PIL.Image'",
            "tests/test_d.py::test_z": "E   fixture 'mocker' not found",
        },
    )
    assert missing_modules(report) == ["yaml", "dateutil", "PIL", "pytest_mock"]


def test_stdlib_own_packages_and_test_folders_are_never_installed():
    report = _report(
        collection_errors={
            "a": "No module named 'tomllib'",
            "b": "No module named 'mypkg.core'",
            "c": "No module named 'tests.helpers'",
            "d": "ImportError: cannot import name 'x' from 'requests'",
        }
    )
    assert missing_modules(report, exclude=["mypkg"]) == []


def test_import_names_map_to_distributions():
    assert [distribution_for(m) for m in ("yaml", "PIL", "cv2", "sklearn", "bs4", "dateutil", "attr", "requests")] == [
        "PyYAML", "Pillow", "opencv-python", "scikit-learn", "beautifulsoup4", "python-dateutil", "attrs", "requests",
    ]
    assert distribution_for("google.protobuf") == "protobuf"


def test_repaired_adds_only_what_is_missing_and_changes_the_hash():
    spec = EnvironmentSpec(requirements=("requests>=2", "pyyaml==6.0.1"))
    assert repaired(spec, ["yaml"]) == spec  # PyYAML is pyyaml
    fixed = repaired(spec, ["yaml", "bs4", "bs4"])
    assert fixed.requirements == ("requests>=2", "pyyaml==6.0.1", "beautifulsoup4")
    assert fixed.content_hash != spec.content_hash


def test_repair_step_records_each_addition():
    report = _report(collection_errors={"t": "No module named 'yaml'"})
    spec, records = repair_step(EnvironmentSpec(), report, attempt=1)
    assert spec.requirements == ("PyYAML",)
    assert records == [RepairRecord(module="yaml", distribution="PyYAML", attempt=1)]
    assert repair_step(spec, report, attempt=2) == (spec, [])  # nothing new: the loop stops


@pytest.mark.docker
@pytest.mark.usefixtures("no_leftover_containers")
def test_a_missing_module_is_repaired_by_rebuilding(open_sandbox, workspace):
    """Oracle tests import yaml, the spec lacks PyYAML: repair → rebuild (pip from the index) → pass."""
    (workspace / "src").mkdir()
    (workspace / "src" / "config.py").write_text("import yaml\n\ndef load(text):\n    return yaml.safe_load(text)\n")
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_config.py").write_text(
        "from config import load\n\ndef test_load():\n    assert load('a: 1') == {'a': 1}\n"
    )
    task = TaskSpec(task_id="yaml", repo=str(workspace), base_ref="a", oracle_ref="b")
    spec = EnvironmentSpec(requirements=("iniconfig",))

    before = run_pytest(open_sandbox(workspace, spec), task, timeout=300, output_limit=100_000)
    assert before.status == Status.AGENT_ERROR
    assert missing_modules(before, exclude=["config"]) == ["yaml"]

    fixed, records = repair_step(spec, before, attempt=1, exclude=["config"])
    assert [r.distribution for r in records] == ["PyYAML"]
    after = run_pytest(open_sandbox(workspace, fixed), task, timeout=300, output_limit=100_000)
    assert after.status == Status.OK
    assert after.outcomes == {"tests/test_config.py::test_load": "passed"}
