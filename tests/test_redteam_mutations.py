"""scripts/redteam_mutations.py stays true to the code: every fix it removes is still there, once.

A fix that moved (a refactor, a second copy of the same line) made its mutation an ``error`` only
when someone ran the half-hour script; this says so in the default test run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("redteam_mutations", ROOT / "scripts" / "redteam_mutations.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["redteam_mutations"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_every_mutation_finds_its_fix_exactly_once_and_names_tests_that_exist():
    script = _script()
    stale = [m.name for m in script.MUTATIONS if script.mutated((ROOT / m.file).read_text(), m) is None]
    assert stale == [], f"these mutations no longer match their file (fix moved or duplicated): {stale}"
    names = [m.name for m in script.MUTATIONS]
    assert len(names) == len(set(names))
    for mutation in script.MUTATIONS:
        for node in mutation.node_ids:
            path, _, name = node.partition("::")
            test = name.partition("[")[0]
            assert (ROOT / path).is_file() and f"def {test}(" in (ROOT / path).read_text(), (mutation.name, node)
