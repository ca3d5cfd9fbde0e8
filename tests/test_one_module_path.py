"""One module path: the top-level folders import only as ``evoci.*``, so a process holds one copy of each flow."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("flows", "tasks", "blocks", "sql", "deployments")


@pytest.mark.parametrize("folder", FOLDERS)
def test_importing_a_top_level_folder_by_its_own_name_fails_and_says_which_path_to_use(folder, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.delitem(sys.modules, folder, raising=False)
    with pytest.raises(ImportError, match=rf"import evoci\.{folder}, not {folder}"):
        importlib.import_module(folder)
    assert f"evoci.{folder}" in sys.modules or importlib.import_module(f"evoci.{folder}")


def test_no_code_or_test_imports_a_top_level_folder_by_its_own_name():
    pattern = re.compile(rf"^\s*(from|import)\s+({'|'.join(FOLDERS)})(\.|\s|$)", re.MULTILINE)
    offenders = [str(path.relative_to(ROOT)) for top in ("evoci", "tests", "scripts", "benchmarks", *FOLDERS)
                 for path in (ROOT / top).rglob("*.py") if pattern.search(path.read_text(errors="replace"))]
    assert offenders == []


def test_no_command_module_imports_the_cli_that_registers_it():
    """``evoci.cli`` registers the others; they share ``evoci.cli_common`` and never import it back."""
    pattern = re.compile(r"^\s*(from\s+evoci\.cli\s+import|import\s+evoci\.cli(\s|$))", re.MULTILINE)
    offenders = [str(path.relative_to(ROOT)) for top in ("evoci", "scripts", "benchmarks", *FOLDERS)
                 for path in (ROOT / top).rglob("*.py") if pattern.search(path.read_text(errors="replace"))]
    assert offenders == []


def test_the_core_report_modules_import_no_protocol_at_module_level():
    """Each protocol's room imports the core's report helpers; the core reaches a room only lazily, from its dispatcher."""
    pattern = re.compile(r"^(from|import)\s+evoci\.(swe_ci|swe_evo|nitr|swe_bench_cl)(\.|\s)", re.MULTILINE)
    core = ("report.py", "digest.py", "artifacts.py", "cli.py", "cli_common.py")
    offenders = [name for name in core if pattern.search((ROOT / "evoci" / name).read_text())]
    assert offenders == []


def test_the_shared_core_imports_no_protocol_at_module_level():
    """The core every protocol builds on (agents, sandboxes, gateway, grading, store, workspace)
    imports no protocol's room: a fifth protocol must be able to use it without the other four."""
    pattern = re.compile(r"^(from|import)\s+evoci\.(swe_ci|swe_evo|nitr|swe_bench_cl)(\.|\s)", re.MULTILINE)
    shared = [*(ROOT / "evoci").glob("*.py"),
              *(path for room in ("agents", "sandbox", "gateway", "grading", "store")
                for path in (ROOT / "evoci" / room).rglob("*.py"))]  # fmt: skip
    offenders = [str(path.relative_to(ROOT)) for path in shared if pattern.search(path.read_text(errors="replace"))]
    assert offenders == []
