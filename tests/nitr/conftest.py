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
