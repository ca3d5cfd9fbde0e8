"""evoci.swe_ci.quality: radon and pylint on small files whose scores are computed by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from evoci.swe_ci.quality import changed_lines, measure

# Halstead volume of `x * 2` (and of `number * 2`): one operator, two operands, N = 3, n = 3.
VOLUME = 3 * math.log2(3)
# radon's MI: (171 − 5.2·ln V − 0.23·G − 16.2·ln L) · 100/171 for code without comment lines,
# with G = Σ cyclomatic complexity of the blocks and L = logical lines (a docstring is one).
def radon_mi(volume: float, complexity: int, lloc: int) -> float:
    return (171 - 5.2 * math.log(volume) - 0.23 * complexity - 16.2 * math.log(lloc)) * 100 / 171


BASE = "def double(x):\n    return x + x\n"
# import, def, assignment, return: 4 statements. pylint reports unused-import (W0611),
# missing-module-docstring (C0114), missing-function-docstring (C0116).
MESSY = "import os\n\n\ndef double(x):\n    y = x * 2\n    return y\n"
MESSY_MI = radon_mi(VOLUME, 1, 4)  # LLOC 4: import, def, assignment, return
MESSY_PYLINT = 10 - 10 * (1 + 2) / 4  # 2.5
# No message: 10.0. LLOC 4 (two docstrings, def, return): the same MI as MESSY.
CLEAN = '"""Doubling."""\n\n\ndef double(number):\n    """Twice ``number``."""\n    return number * 2\n'
CLEAN_MI = radon_mi(VOLUME, 1, 4)
# No message: 10.0. A branch: G = 2, LLOC 6 (two docstrings, def, if, two returns): lower MI.
BRANCHY = ('"""Doubling."""\n\n\ndef double(number):\n    """Twice ``number``, or 0 for nothing."""\n'
           "    if number:\n        return number * 2\n    return 0\n")
BRANCHY_MI = radon_mi(VOLUME, 2, 6)


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_hand_computed_mi_complexity_and_pylint_score(tmp_path):
    base = tree(tmp_path / "base", {"pkg/double.py": BASE})
    messy = measure(tree(tmp_path / "messy", {"pkg/double.py": MESSY, "tests/test_double.py": "def test_x():\n    pass\n"}),
                    base)
    assert (messy.files, messy.sloc, messy.blocks, messy.cc_mean, messy.cc_max) == (1, 4, 1, 1, 1)  # tests not measured
    assert messy.mi == pytest.approx(MESSY_MI, abs=1e-3) and round(MESSY_MI, 2) == 81.99
    assert messy.pylint_score == MESSY_PYLINT == 2.5
    assert messy.pylint_messages == {"warning": 1, "convention": 2}
    assert (messy.lines_added, messy.lines_deleted, messy.error) == (5, 1, None)

    clean = measure(tree(tmp_path / "clean", {"pkg/double.py": CLEAN}), base)
    assert (clean.mi, clean.pylint_score) == (pytest.approx(CLEAN_MI, abs=1e-3), 10.0)
    branchy = measure(tree(tmp_path / "branchy", {"pkg/double.py": BRANCHY}), base)
    assert (branchy.mi, branchy.cc_mean, branchy.pylint_score) == (pytest.approx(BRANCHY_MI, abs=1e-3), 2, 10.0)
    assert round(BRANCHY_MI, 2) == 78.02


def test_the_codebase_cannot_configure_pylint(tmp_path):
    """A pylintrc in the measured tree could disable every check, or load a plugin that runs its code."""
    files = {"pkg/double.py": MESSY, "pylintrc": "[MAIN]\nload-plugins=pkg.evil\n[MESSAGES CONTROL]\ndisable=all\n",
             "pkg/evil.py": "import pathlib\npathlib.Path('ran').write_text('x')\n",
             "pyproject.toml": "[tool.pylint.main]\ndisable = ['all']\n"}
    root = tree(tmp_path / "t", files)
    quality = measure(root, tree(tmp_path / "base", {}))
    assert quality.pylint_score is not None and quality.pylint_score < 10
    assert quality.pylint_messages["warning"] >= 1
    assert not (root / "ran").exists()


def test_unparsable_file_is_counted_and_left_out_of_mi(tmp_path):
    root = tree(tmp_path / "t", {"pkg/double.py": MESSY, "pkg/broken.py": "def broken(:\n"})
    quality = measure(root, tree(tmp_path / "base", {}))
    assert (quality.files, quality.unparsable_files) == (2, 1)
    assert quality.mi == pytest.approx(MESSY_MI, abs=1e-3)
    assert quality.pylint_messages.get("error", 0) >= 1  # pylint reports the syntax error


def test_a_file_that_overflows_the_parser_is_unparsable_and_the_rest_is_measured(tmp_path):
    # 100,000 unary minuses: CPython's parser gives up with MemoryError, not SyntaxError.
    root = tree(tmp_path / "t", {"pkg/double.py": MESSY, "pkg/deep.py": "x = " + "-" * 100_000 + "1\n"})
    quality = measure(root, tree(tmp_path / "base", {}), pylint=False)
    assert (quality.files, quality.unparsable_files) == (2, 1)
    assert quality.mi == pytest.approx(MESSY_MI, abs=1e-3)


def test_quality_nodes_measuring_at_once_in_threads_all_succeed(tmp_path):
    # Quality nodes run as concurrent Prefect tasks in one process; CPython 3.11's AST builder is
    # not thread-safe (gh-106905), which once failed a demo run. A garbage collection that runs
    # Python code lets another thread in mid-build: made frequent here so the race shows at once.
    import gc
    import time
    from concurrent.futures import ThreadPoolExecutor
    code = "".join(f"def f{i}(x):\n    if x:\n        return [y for y in range(x) if y % 2]\n    return {{'a': x}}\n"
                   for i in range(300))
    root = tree(tmp_path / "t", {f"pkg/m{i}.py": code for i in range(4)})
    base = tree(tmp_path / "base", {})

    def switch(_phase, _info):
        time.sleep(0.0001)

    threshold = gc.get_threshold()
    gc.callbacks.append(switch)
    gc.set_threshold(50, 1, 1)
    try:
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda _: measure(root, base, pylint=False), range(8)))
    finally:
        gc.callbacks.remove(switch)
        gc.set_threshold(*threshold)
    assert {(q.files, q.unparsable_files, q.cc_mean) for q in results} == {(4, 0, results[0].cc_mean)}


def test_changed_lines_count_like_git_diff_over_source_files(tmp_path):
    base = tree(tmp_path / "base", {"a.py": "x = 1\ny = 2\n", "gone.py": "z = 3\n", "tests/t.py": "old\n"})
    new = tree(tmp_path / "new", {"a.py": "x = 1\ny = 3\nw = 4\n", "new.py": "v = 5\n", "tests/t.py": "new\n"})
    # a.py: −1 +2; gone.py: −1; new.py: +1; tests are not counted.
    assert changed_lines(new, base, "tests") == (3, 2)
