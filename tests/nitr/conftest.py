"""A checkout in the public NITR layout, assembled from the fixture files in ``checkout/``.

``checkout/`` holds what is particular to the fixture (its design matrix with the public
table's quirks, pipeline.json files using every module, unusable cases); the starter code,
tests and references of its two usable cases are taken from evoci's built-in probes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evoci.nitr.suites import PROBES

FIXTURE = Path(__file__).parent / "checkout"
# fixture case → the built-in probe that lends it starter code, evaluator files and references
BORROWED = {"101.retry-setting-python": ("003.retry-setting-locality", "101.retry-setting-python"),
            "102.percent-clamp": ("005.percent-clamp-reuse-cpp", "percent-clamp")}


@pytest.fixture
def public_checkout(tmp_path) -> Path:
    root = tmp_path / "NITR"
    for case, (builtin, evaluator) in BORROWED.items():
        shutil.copytree(PROBES / "cases" / builtin, root / "cases" / case)
        shutil.copytree(PROBES / "evaluator" / builtin, root / "evaluator" / evaluator)
        shutil.copytree(PROBES / "references" / builtin, root / "references" / case)
    shutil.copytree(PROBES / "docs" / "003.retry-setting-locality", root / "docs" / "101.retry-setting-python")
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
    return root


ONE_PROJECT = Path(__file__).parent / "one_project"
# one-project fixture case → the built-in probe that lends starter code, tests, checks and references
ONE_PROJECT_BORROWED = {"201.retry-setting": "003.retry-setting-locality", "202.percent-clamp": "005.percent-clamp-reuse-cpp"}


@pytest.fixture
def one_project_checkout(tmp_path) -> Path:
    """A checkout built as one CMake project (like the public suite): ctest runs every hidden test."""
    root = tmp_path / "ONE"
    for case, builtin in ONE_PROJECT_BORROWED.items():
        shutil.copytree(PROBES / "cases" / builtin, root / "cases" / case)
        for folder in ("tests", "checks"):
            if (PROBES / "evaluator" / builtin / folder).is_dir():
                shutil.copytree(PROBES / "evaluator" / builtin / folder, root / "evaluator" / case / folder)
        shutil.copytree(PROBES / "references" / builtin, root / "references" / case)
    shutil.copytree(ONE_PROJECT, root, dirs_exist_ok=True)
    return root
